/*
 * agent: the agent's lifecycle, shared by the entry points (Agent_OnLoad,
 * Agent_OnAttach, Agent_OnUnload) and the agent thread.
 *
 * At most one recording (session) is live. It starts in Agent_OnAttach, or
 * at VMInit when the start-up options name a socket, and ends when the
 * agent thread sees the profiler go; both happen under one lock.
 */
#ifndef JBPF_AGENT_H
#define JBPF_AGENT_H

#include <jvmti.h>

/*
 * Ends the live recording, in this order: the handler stops taking
 * signals, every JVMTI event is disabled, the outbox is emptied, fd is
 * closed. Called by the agent thread only, once per recording, after it has
 * given back every outbox chunk it took.
 */
void agent__end_session(jvmtiEnv *jvmti, int fd);

#endif /* JBPF_AGENT_H */
