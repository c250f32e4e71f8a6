/*
 * flametree: the merged call tree a flame graph draws, built from a profile,
 * and the tree of a comparison of two profiles.
 *
 * A tree is a flat array of nodes in preorder. Node 0 is the root ("all",
 * frame FLAME_ROOT_FRAME, level 0); a node at level L is a child of the
 * nearest preceding node at level L-1. Siblings are ordered by frame name,
 * then kind, so a reader needs no sorting.
 *
 *   total   count of the stacks that pass through the node
 *   self    count of the stacks that end at it
 *   before  (diff trees only) total of the same path in the BEFORE profile
 *
 * flame_tree__build gives frame ids of the profile. flame_tree__diff matches
 * the two profiles' paths by (name, kind) from the root and keeps AFTER's
 * frame ids; a path found only in BEFORE is kept, with total and self 0,
 * and its frames get ids from profile__frame_count(after) up, listed in
 * extra[] as BEFORE's frame ids. So every BEFORE count is in the tree: a
 * reader draws AFTER's shape and can still say what vanished.
 *
 * flame_tree__build also gives stack_node[i], the node where the
 * profile's stack i ends (FLAME_NO_NODE for a stack not drawn: its count is
 * 0), so that what is known per stack (its times) can be put on the tree.
 * A diff tree has no stack_node (NULL).
 *
 * Neither call changes the profiles. Both return 0 or -ENOMEM; the tree is
 * freed with flame_tree__free whatever they return.
 */
#ifndef JBPF_OUTPUT_FLAMETREE_H
#define JBPF_OUTPUT_FLAMETREE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

#define FLAME_ROOT_FRAME UINT32_MAX
#define FLAME_NO_NODE UINT32_MAX

struct flame_node {
	uint32_t frame;  /* FLAME_ROOT_FRAME for the root */
	uint32_t level;
	uint64_t total;
	uint64_t self;
	uint64_t before; /* 0 outside diff trees */
};

struct flame_tree {
	struct flame_node *nodes;
	size_t nr, cap;
	uint32_t *extra;  /* diff: BEFORE frame id of each frame id past AFTER's */
	size_t nr_extra, cap_extra;
	uint32_t *stack_node; /* build: profile stack -> node where it ends, or FLAME_NO_NODE */
	size_t nr_stacks;
};

int flame_tree__build(const struct profile *profile, struct flame_tree *tree);
int flame_tree__diff(const struct profile *before, const struct profile *after, struct flame_tree *tree);
void flame_tree__free(struct flame_tree *tree);

#endif /* JBPF_OUTPUT_FLAMETREE_H */
