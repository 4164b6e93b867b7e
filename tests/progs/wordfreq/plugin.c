/* The plug-in wordfreq dlopens (see wf.h): lower-cases a word. */
#include "wf.h"

void wf_plugin_normalize(char *word);

static WF_NOINLINE char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

WF_NOINLINE void wf_plugin_normalize(char *word)
{
	for (; *word; word++)
		*word = lower(*word);
}
