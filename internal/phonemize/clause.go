package phonemize

import (
	"strings"
	"unicode"
)

// Clause types, as espeak-ng 1.51 numbers them (translate.h): a pause, an intonation and a
// phrase type in one int. piper-phonemize compares a clause's type, masked with 0xFFFFF, with
// these exact values to pick the punctuation it keeps.
const (
	clauseIntonationComma       = 0x00001000
	clauseIntonationQuestion    = 0x00002000
	clauseIntonationExclamation = 0x00003000
	clauseOptionalSpaceAfter    = 0x00008000
	clauseTypeClause            = 0x00040000
	clauseTypeSentence          = 0x00080000
	clausePunctuationInWord     = 0x00100000
	clauseSpeakPunctuationName  = 0x00200000

	clausePeriod      = 40 | clauseTypeSentence
	clauseComma       = 20 | clauseIntonationComma | clauseTypeClause
	clauseQuestion    = 40 | clauseIntonationQuestion | clauseTypeSentence
	clauseExclamation = 45 | clauseIntonationExclamation | clauseTypeSentence
	clauseColon       = 30 | clauseTypeClause
	clauseSemicolon   = 30 | clauseIntonationComma | clauseTypeClause
	clauseParagraph   = 70 | clauseTypeSentence
)

// clauseTypes gives the clause type of the punctuation characters that can end a clause
// (espeak-ng 1.51's clause_type_from_codepoint over its Unicode property table), for the
// scripts of the languages neural voices speak: Latin, Greek, Armenian, Arabic, Devanagari
// and the CJK and full-width forms. A character not listed ends no clause.
var clauseTypes = map[rune]int{
	'.': clausePeriod, '?': clauseQuestion, '!': clauseExclamation,
	',': clauseComma, ':': clauseColon, ';': clauseSemicolon,
	0x00A1: clauseSemicolon | clauseOptionalSpaceAfter, // ¡
	0x00BF: clauseSemicolon | clauseOptionalSpaceAfter, // ¿
	0x037E: clauseQuestion,                             // Greek question mark
	0x0387: clauseSemicolon,                            // Greek ano teleia
	0x055B: clauseExclamation | clausePunctuationInWord,
	0x055C: clauseExclamation | clausePunctuationInWord,
	0x055D: clauseComma,
	0x055E: clauseQuestion | clausePunctuationInWord,
	0x0589: clausePeriod | clauseOptionalSpaceAfter,                                 // Armenian full stop
	0x060C: clauseComma,                                                             // Arabic comma
	0x061B: clauseSemicolon,                                                         // Arabic semicolon
	0x061F: clauseQuestion,                                                          // Arabic question mark
	0x06D4: clausePeriod,                                                            // Arabic full stop
	0x0964: clausePeriod | clauseOptionalSpaceAfter,                                 // Devanagari danda
	0x0965: clauseParagraph,                                                         // Devanagari double danda
	0x2013: clauseSemicolon,                                                         // en dash
	0x2014: clauseSemicolon,                                                         // em dash
	0x2026: clauseSemicolon | clauseSpeakPunctuationName | clauseOptionalSpaceAfter, // …
	0x203C: clauseExclamation,
	0x2047: clauseQuestion,
	0x204F: clauseSemicolon,
	0x2E3A: clauseSemicolon,
	0x2E3B: clauseSemicolon,
	0x3001: clauseComma | clauseOptionalSpaceAfter,
	0x3002: clausePeriod | clauseOptionalSpaceAfter,
	0xFE31: clauseSemicolon,
	0xFE32: clauseSemicolon,
	0xFE50: clauseComma, 0xFE51: clauseComma, 0xFE52: clausePeriod, 0xFE54: clauseSemicolon,
	0xFE55: clauseColon, 0xFE56: clauseQuestion, 0xFE57: clauseExclamation,
	0xFF01: clauseExclamation | clauseOptionalSpaceAfter,
	0xFF0C: clauseComma | clauseOptionalSpaceAfter,
	0xFF0E: clausePeriod | clauseOptionalSpaceAfter,
	0xFF1A: clauseColon | clauseOptionalSpaceAfter,
	0xFF1B: clauseSemicolon | clauseOptionalSpaceAfter,
	0xFF1F: clauseQuestion | clauseOptionalSpaceAfter,
	0xFF61: clausePeriod,
	0xFF64: clauseComma,
}

// brackets are the characters after which punctuation ends a clause even without a space
// (espeak-ng's IsBracket): these, and U+2014 to U+201F (dashes and curly quotes).
const brackets = "()[]{}<>\"'`\u00ab\u00bb\u300a\u300b"

func isBracket(r rune) bool {
	return r >= 0x2014 && r <= 0x201F || strings.ContainsRune(brackets, r)
}

// ordinalDotLanguages are the espeak-ng languages (NUM_ORDINAL_DOT) in which a dot after a
// number followed by a lower-case word makes an ordinal ("am 3. mai"), not a clause end.
var ordinalDotLanguages = map[string]bool{
	"da": true, "de": true, "fi": true, "hu": true, "kl": true, "lt": true, "ltg": true,
	"nl": true, "nb": true, "sl": true, "smj": true,
}

// isRomanUpper reports whether r is an upper-case Roman numeral letter (espeak-ng's IsRomanU).
func isRomanUpper(r rune) bool { return strings.ContainsRune("IVXLCDM", r) }

// clauseEnd is where a clause ends in a line of text, as espeak-ng's ReadClause decides it.
type clauseEnd struct {
	end   int // byte offset just past the clause's terminating punctuation
	ctype int // the clause type of the punctuation
}

// splitClauses finds the clause ends in line, a text without line breaks, mirroring espeak-ng
// 1.51's ReadClause (readclause.c) for plain text (no SSML, no spoken punctuation): a
// punctuation mark of clauseTypes ends a clause when a space, a bracket, "?", or the end of
// the text follows (or at once for marks that need no space); a run of "?" and "!" counts as
// its first mark; three dots or more are an ellipsis, two a full stop; a full stop does not
// end a clause before a lower-case letter, before "'s", before any letter or digit has been
// read, or after a number before a lower-case word in languages with ordinal dots. lang is
// the voice's language ("de" for "de+f3").
//
// espeak-ng itself says where its clauses end (how far it read for each); splitClauses only
// finds which punctuation ended each, and Phonemize warns where the two disagree.
func splitClauses(lang, line string) []clauseEnd {
	rs := []rune(line)
	offs := runeOffsets(rs)
	at := func(i int) rune {
		if i < len(rs) {
			return rs[i]
		}
		return 0
	}
	var ends []clauseEnd
	anyAlnum := false
	var cprev, cprev2 rune = ' ', ' '
	for i := 0; i < len(rs); i++ {
		c1 := rs[i]
		next := i + 1 // index of c2
		if unicode.IsLetter(c1) || unicode.IsDigit(c1) {
			anyAlnum = true
		}
		if c1 == '.' && at(next) == '.' {
			j := next + 1
			for j < len(rs) && rs[j] == '.' {
				j++
			}
			if j-i < 3 {
				// Two dots: the first is read as text, the second as a full stop.
				cprev2, cprev = cprev, c1
				continue
			}
			c1 = 0x2026 // three dots or more: an ellipsis
			i, next = j-1, j
		}
		ctype, ok := clauseTypes[c1]
		if !ok || ctype&clausePunctuationInWord != 0 {
			cprev2, cprev = cprev, c1
			continue
		}
		if ctype&(clauseQuestion|clauseExclamation) != 0 {
			for next < len(rs) && clauseTypes[rs[next]]&(clauseQuestion|clauseExclamation) != 0 {
				i, next = next, next+1
			}
		}
		c2 := at(next)
		isEnd := unicode.IsSpace(c2) || ctype&clauseOptionalSpaceAfter != 0 || isBracket(c2) || c2 == '?' || next >= len(rs)
		if isEnd {
			k := next
			for k < len(rs) && unicode.IsSpace(rs[k]) {
				k++
			}
			cnext := at(k)
			if c1 == '.' {
				if cnext == '\'' && at(k+1) == 's' {
					isEnd = false
				}
				if ordinalDotLanguages[lang] && (unicode.IsDigit(cprev) || isRomanUpper(cprev) && (isRomanUpper(cprev2) || unicode.IsSpace(cprev2))) {
					if !unicode.IsDigit(cprev) || unicode.IsLower(cnext) || cnext == '-' {
						isEnd = false
					}
				}
				if unicode.IsLower(cnext) {
					isEnd = false
				}
			}
			if !anyAlnum {
				isEnd = false
			}
			if isEnd {
				ends = append(ends, clauseEnd{end: offs[next], ctype: ctype})
				anyAlnum = false
				i = k - 1
				cprev2, cprev = ' ', ' '
				continue
			}
		}
		cprev2, cprev = cprev, rs[i]
	}
	return ends
}

// runeOffsets returns the byte offset of each rune of rs in its UTF-8 text, and last that of
// the text's end.
func runeOffsets(rs []rune) []int {
	offs := make([]int, len(rs)+1)
	o := 0
	for i, r := range rs {
		offs[i] = o
		o += len(string(r))
	}
	offs[len(rs)] = o
	return offs
}

// terminator returns the punctuation piper-phonemize keeps for a clause of type ctype
// (empty for none), and whether the clause ends a sentence.
func terminator(ctype int) (punct string, sentenceEnd bool) {
	switch ctype & 0xFFFFF {
	case clausePeriod:
		punct = "."
	case clauseQuestion:
		punct = "?"
	case clauseExclamation:
		punct = "!"
	case clauseComma:
		punct = ","
	case clauseColon:
		punct = ":"
	case clauseSemicolon:
		punct = ";"
	}
	return punct, ctype&clauseTypeSentence != 0
}
