#!/bin/bash
# The folders and what each may include: docs/architecture.md's table
# ("The tree, and what may include what") checked against the #include
# lines of every source file outside tests/ and bench/.
#
# The table's last column names what a folder may include, in backticks:
# a folder (`common/`: any header in it) or one header (`bpf/jbpfprof.h`);
# "everything" for the top of user/, "nothing" for none. Words outside
# backticks, and backticked names without a '/', are the reader's notes.
# An include is resolved as the compiler does for "...": beside the file,
# then from the top of the tree; one found in neither (a generated
# skeleton, a protobuf header) is not the tree's and is passed over.
#
# Fails, with one line each, on an include the table does not allow, on a
# source file in a folder the table does not name, and on a cycle between
# folders (which two rows allowing each other would not show). Prints one
# cmocka-style summary line so tests/run-suite.sh counts it as one test.
#
#   tests/check-layers.sh [TOP]        (TOP: the tree, default .)
set -u
top=${1:-.}
cd "$top" || exit 2
doc=docs/architecture.md

rules=$(awk '
	/^### The tree, and what may include what/ { in_section = 1; next }
	in_section && /^\| `/ {
		n = split($0, col, "|")
		if (!match(col[2], /`[^`]*`/))
			next
		dir = substr(col[2], RSTART + 1, RLENGTH - 2)
		sub(/\/$/, "", dir)
		allowed = ""
		rest = col[n - 1]
		if (rest ~ /everything/)
			allowed = "*"
		while (match(rest, /`[^`]*`/)) {
			tok = substr(rest, RSTART + 1, RLENGTH - 2)
			rest = substr(rest, RSTART + RLENGTH)
			if (tok ~ /\//)
				allowed = allowed " " tok
		}
		print dir "\t" allowed
		found = 1
		next
	}
	in_section && found && !/^\|/ { exit }
' "$doc")
if [ -z "$rules" ]; then
	echo "check-layers: no table of folders found in $doc" >&2
	echo "[  FAILED  ] 1 test(s)"
	exit 1
fi

# Every include of the tree's own sources: "FILE<TAB>TARGET", both from the top.
sources=$(find . -path ./build -prune -o -path ./tests -prune -o -path ./bench -prune -o \
		-type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
known_files=$(find . -path ./build -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||')
includes=$(printf '%s\n' "$sources" | xargs grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' /dev/null |
	awk -v files="$known_files" '
	# a/b/../c.h to a/c.h
	function normal(path,    n, part, out, i, k) {
		n = split(path, part, "/")
		k = 0
		for (i = 1; i <= n; i++) {
			if (part[i] == "." || part[i] == "")
				continue
			if (part[i] == ".." && k > 0) { k--; continue }
			out[++k] = part[i]
		}
		path = out[1]
		for (i = 2; i <= k; i++)
			path = path "/" out[i]
		return path
	}
	BEGIN {
		n = split(files, f, "\n")
		for (i = 1; i <= n; i++)
			exists[f[i]] = 1
	}
	{
		file = substr($0, 1, index($0, ":") - 1)
		inc = $0
		sub(/^[^"]*"/, "", inc)
		sub(/".*$/, "", inc)
		dir = file
		if (!sub(/\/[^\/]*$/, "", dir))
			dir = "."
		if (normal(dir "/" inc) in exists)
			print file "\t" normal(dir "/" inc)
		else if (normal(inc) in exists)
			print file "\t" normal(inc)
	}')

printf '%s\n' "$includes" | awk -v rules="$rules" '
	function folder(path,    d) { d = path; return sub(/\/[^\/]*$/, "", d) ? d : "." }
	BEGIN {
		FS = "\t"
		n = split(rules, line, "\n")
		for (i = 1; i <= n; i++) {
			split(line[i], part, "\t")
			known[part[1]] = 1
			allow[part[1]] = part[2] " "
		}
		bad = 0
	}
	NF == 2 {
		from = folder($1); to = folder($2)
		if (!(from in known)) {
			if (!(from in told)) {
				print "check-layers: " $1 ": its folder " from "/ is not in the table of docs/architecture.md"
				told[from] = 1; bad++
			}
			next
		}
		if (from == to)
			next
		if (!(to in known)) {
			print "check-layers: " $1 " includes " $2 ", in " to "/, which the table does not name"
			bad++
			next
		}
		edge[from, to] = 1
		if (!((from, to) in witness))
			witness[from, to] = $1 " -> " $2
		if (allow[from] ~ /^\*/ || index(allow[from], " " to "/ ") || index(allow[from], " " $2 " "))
			next
		print "check-layers: " $1 " includes " $2 ": " from "/ may include only" \
			(allow[from] ~ /^ *$/ ? " nothing of the tree" : allow[from])
		bad++
	}
	END {
		# Which folders reach which, through any chain of includes.
		for (e in edge) {
			split(e, ab, SUBSEP)
			reach[ab[1], ab[2]] = 1
		}
		for (k in known)
			for (i in known)
				if ((i, k) in reach)
					for (j in known)
						if ((k, j) in reach)
							reach[i, j] = 1
		for (a in known)
			for (b in known)
				if (a < b && (a, b) in reach && (b, a) in reach) {
					print "check-layers: a cycle between " a "/ and " b "/" \
						((a, b) in witness ? ": " witness[a, b] : "") \
						((b, a) in witness ? "; " witness[b, a] : "")
					bad++
				}
		if (bad) {
			print "[  FAILED  ] 1 test(s)"
			exit 1
		}
		print "check-layers: every include as docs/architecture.md allows, no cycle between folders"
		print "[  PASSED  ] 1 test(s)."
	}
'
