// narrator-espeak: reads text with the eSpeak NG library, clause by clause, for Narrator's
// phonemiser (internal/phonemize). It is a program of its own because eSpeak NG is GPL-3.0:
// the narrator process never links it, and runs this helper in its sandbox instead.
//
// Build: cc -O2 -o narrator-espeak narrator-espeak.c -lespeak-ng (scripts/deps.sh does).
//
// Protocol, on stdin and stdout, one request at a time:
//   request:  VOICE TAB TEXT NEWLINE     (TEXT holds no newline and no NUL)
//   answer:   for each clause, "C " BYTES " " IPA NEWLINE, where BYTES is how far into TEXT
//             eSpeak NG read for the clause (one character past it, where it looked ahead),
//             -1 for "to the end"; then "D" NEWLINE.
//   or:       "E " MESSAGE NEWLINE if the voice does not exist.
// After each request the library's reader is reset, so that no request leaks into the next
// (eSpeak NG 1.51 keeps a character it looked ahead at: after "..", the next text would start
// with "dot").
#include <espeak-ng/speak_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int discard(short *wav, int n, espeak_EVENT *events) {
	(void)wav;
	(void)n;
	(void)events;
	return 0;
}

// setVoice selects voice by name, or else by language, as the espeak-ng program does
// (espeak_SetVoiceByName refuses "en-gb" and "fr-fr" in 1.51).
static int setVoice(const char *voice) {
	if (espeak_SetVoiceByName(voice) == EE_OK)
		return 0;
	espeak_VOICE spec;
	memset(&spec, 0, sizeof(spec));
	spec.languages = voice;
	return espeak_SetVoiceByProperties(&spec) == EE_OK ? 0 : -1;
}

int main(void) {
	if (espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL, 0) < 0) {
		fprintf(stderr, "narrator-espeak: cannot initialise eSpeak NG\n");
		return 1;
	}
	espeak_SetSynthCallback(discard);
	char *line = NULL;
	size_t cap = 0;
	char current[256] = "";
	ssize_t n;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		char *tab = strchr(line, '\t');
		if (tab == NULL || tab - line >= (ssize_t)sizeof(current)) {
			printf("E malformed request\n");
			fflush(stdout);
			continue;
		}
		*tab = 0;
		const char *text = tab + 1;
		if (strcmp(line, current) != 0) {
			if (setVoice(line) != 0) {
				current[0] = 0;
				printf("E voice %s does not exist\n", line);
				fflush(stdout);
				continue;
			}
			strcpy(current, line);
		}
		const void *p = text;
		while (p != NULL) {
			const char *start = p;
			const char *ipa = espeak_TextToPhonemes(&p, espeakCHARS_AUTO, espeakPHONEMES_IPA);
			printf("C %ld ", p == NULL ? -1L : (long)((const char *)p - text));
			for (const char *c = ipa; c != NULL && *c; c++)
				putchar(*c == '\n' || *c == '\r' ? ' ' : *c);
			putchar('\n');
			if (p == start)
				break; // no progress: never loop
		}
		// Reset the reader: synthesising nothing starts it afresh.
		espeak_Synth("", 1, 0, POS_CHARACTER, 0, espeakCHARS_AUTO, NULL, NULL);
		printf("D\n");
		fflush(stdout);
	}
	free(line);
	return 0;
}
