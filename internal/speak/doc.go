// Package speak turns an article into engine-ready synthesis units:
// plain-text sentences, normalised so that speech engines read them well.
//
// Script is the entry point: it parses the body with package article,
// applies project pronunciation rules, splits blocks into sentences,
// normalises each sentence for its language and splits run-on sentences so
// that no unit is longer than MaxUnitChars. Units carry the pause that
// follows them (PauseTitle, PauseHeading, PauseParagraph, PauseSentence,
// PauseClause, PauseWord), the voice named in the markup, and the SSML
// speaking rate.
//
// Normalisation is table-driven, one file per language: en.go (en_US reads
// 03/10/2026 month first, other English locales day first), de.go, fr.go.
// A language is a lang value holding its number words, separators, month
// names, currencies, scale words, units, abbreviations and acronyms, and an
// ordered list of named rules (regular expression plus replacement). To add
// a language, write newXxx in xxx.go, register it in the languages table in
// lang.go, and add a test case for each of its rules to normalize_test.go
// (TestEveryRuleHasACase enforces it). Other languages get the
// language-neutral fallback, which only cleans the text and leaves numbers
// to the engine, which reads them in its own language.
//
// Output never contains markup: the characters < and > never reach a unit.
// All regular expressions are RE2 (linear time), and Script runs in time
// linear in the size of the article (see BenchmarkScript100k).
package speak
