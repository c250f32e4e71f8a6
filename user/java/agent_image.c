/*
 * agent_image: the embedded agent (contract in agent_image.h). The build
 * passes the library's path as JBPF_AGENT_IMAGE.
 */
#include "agent_image.h"

#ifndef JBPF_AGENT_IMAGE
#error "JBPF_AGENT_IMAGE must name the agent library to embed"
#endif

__asm__(".section .rodata\n"
	".balign 16\n"
	"jbpf_agent_image_start:\n"
	".incbin \"" JBPF_AGENT_IMAGE "\"\n"
	"jbpf_agent_image_end:\n"
	".previous\n");
extern const char jbpf_agent_image_start[] __asm__("jbpf_agent_image_start");
extern const char jbpf_agent_image_end[] __asm__("jbpf_agent_image_end");

const void *agent_image__bytes(size_t *size)
{
	*size = (size_t)(jbpf_agent_image_end - jbpf_agent_image_start);
	return jbpf_agent_image_start;
}
