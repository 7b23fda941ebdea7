// Package phonemize turns text into the input of neural voices: the phoneme IDs of Piper
// voices, exactly as piper-phonemize makes them, and the tokens of Kokoro models, as
// kokoro-onnx makes them. Both read the text with eSpeak NG.
//
// # eSpeak NG runs in a helper process
//
// eSpeak NG is GPL-3.0, so the narrator process never links it: a small C program,
// narrator-espeak (helper/narrator-espeak.c, built by scripts/deps.sh with
// "cc -O2 -o bin/narrator-espeak internal/phonemize/helper/narrator-espeak.c -lespeak-ng"),
// links libespeak-ng and answers requests on its stdin, one text at a time, with the IPA of
// each clause and how far into the text eSpeak NG read for it. A Phonemizer keeps up to
// Options.Procs of these processes warm, in the engines' sandbox (Options.Sandbox), and hands
// each text to an idle one, so that a text costs no process start. A process that overruns a
// text's time limit or dies is killed with its process group and the text retried once on a
// fresh process, as the speech engines' are.
//
// Why a helper and not the espeak-ng program, which the espeak engine runs: the program prints
// phonemes only while it synthesises, after its intonation pass, which gives a clause without
// a stressed syllable one, so its IPA differs from espeak_TextToPhonemes' (which
// piper-phonemize uses) on every such clause: piper reads "this, is: a; test." as
// "ðˈɪs, ɪz: ˈeɪ; tˈɛst.", the program "ðˈɪs, ˈɪz: …", and "I am the" as "aɪɐm ðə", the program
// "aɪɐm ðˈə". It also reads its input in lines of at most 999 bytes. The helper calls
// espeak_TextToPhonemes, as piper does, and reproduces piper's published vectors.
//
// # Clause punctuation
//
// Piper keeps each clause's punctuation, which piper-phonemize reads from
// espeak_TextToPhonemesWithTerminator, a function of its own fork (and of eSpeak NG 1.52).
// Debian's 1.51 lacks it, so the punctuation is recovered from the text eSpeak NG consumed:
// splitClauses mirrors the rules of 1.51's ReadClause that decide which punctuation ends a
// clause (a mark followed by a space, "...", "?!", no full stop before a lower-case word or
// in "U.S.", ordinal dots in German…), and each clause gets the punctuation that ends just
// before the point the helper reports. Where eSpeak NG ends no clause at punctuation that
// splitClauses expected to, Phonemize logs a warning and that punctuation is not kept.
//
// eSpeak NG 1.51 remembers, from one text to the next, a character it looked ahead at: after
// a text ending in "..", the next would begin with "dˈɑːt" ("dot"). The helper resets the
// library's reader after every text.
//
// # Piper
//
// ParsePiperConfig reads a voice's NAME.onnx.json; Phonemize, then PiperConfig.Sentences and
// PiperConfig.IDs (or Phonemizer.Piper, all three) make each sentence's IDs: "^", each
// phoneme followed by the pad "_", "$".
//
// # Kokoro
//
// Phonemizer.Kokoro reads a text as kokoro-onnx's phonemiser does, and KokoroTokens cuts the
// phonemes into chunks of at most KokoroMaxTokens tokens. ParseKokoroVoice says what a voice
// name ("af_heart") tells: language, gender and the espeak-ng voice, if eSpeak NG can read
// the language (not Japanese and Mandarin, which need other G2P).
package phonemize
