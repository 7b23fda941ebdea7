package speak

import (
	"strings"
	"testing"
)

// normCase is one normalisation case; rule names the rule it exercises,
// and every rule of every language must have at least one case.
type normCase struct {
	rule, lang, in, want string
}

var normCases = []normCase{
	// English.
	{"url", "en_US", "Read more at https://www.example.com/news today", "Read more at w w w dot example dot com slash news today"},
	{"url", "en_US", "See http://bbc.co.uk.", "See bbc dot co dot uk."},
	{"email", "en_US", "Write to jane.doe@example.org now", "Write to jane dot doe at example dot org now"},
	{"domain", "en_US", "Visit example.com for details", "Visit example dot com for details"},
	{"telephone", "en_US", "Call 555-123-4567 today", "Call five five five, one two three, four five six seven today"},
	{"telephone", "en_US", "Call (555) 123-4567", "Call five five five, one two three, four five six seven"},
	{"date-iso", "en_US", "on 2026-10-03", "on October third, twenty twenty six"},
	{"date-iso", "en_GB", "on 2026-10-03", "on the third of October twenty twenty six"},
	{"date-numeric", "en_US", "on 03/10/2026", "on March tenth, twenty twenty six"},
	{"date-numeric", "en_GB", "on 03/10/2026", "on the third of October twenty twenty six"},
	{"date-numeric", "en_US", "on 25/12/2026", "on December twenty fifth, twenty twenty six"},
	{"date-month-day", "en_US", "on October 3", "on October third"},
	{"date-month-day", "en_US", "on October 3rd", "on October third"},
	{"date-month-day", "en_US", "on Oct. 3, 2026", "on October third, twenty twenty six"},
	{"date-month-day", "en_US", "since May 2020", "since May twenty twenty"},
	{"date-day-month", "en_GB", "on 3 October", "on the third of October"},
	{"date-day-month", "en_GB", "on the 3rd of October 2026", "on the third of October twenty twenty six"},
	{"time-ampm", "en_US", "at 9 am", "at nine a m"},
	{"time-ampm", "en_US", "from 10:30 p.m. Monday", "from ten thirty p m Monday"},
	{"time-ampm", "en_US", "It opens at 9 a.m.", "It opens at nine a m."},
	{"time-clock", "en_US", "at 10:30", "at ten thirty"},
	{"time-clock", "en_US", "at 10:05", "at ten oh five"},
	{"time-clock", "en_US", "at 10:00", "at ten o'clock"},
	{"time-clock", "en_US", "at 18:00", "at eighteen hundred"},
	{"currency", "en_US", "$3.5 million", "three point five million dollars"},
	{"currency", "en_GB", "£2.4m", "two point four million pounds"},
	{"currency", "en_US", "€40", "forty euros"},
	{"currency", "en_US", "$1.50", "one dollar fifty cents"},
	{"currency", "en_US", "$1", "one dollar"},
	{"currency", "en_US", "$0.99", "ninety nine cents"},
	{"currency", "en_US", "$5bn", "five billion dollars"},
	{"currency", "en_US", "$300k", "three hundred thousand dollars"},
	{"currency", "en_US", "USD 10,000", "ten thousand dollars"},
	{"currency-after", "en_US", "10 EUR", "ten euros"},
	{"percent", "en_US", "65%", "sixty five percent"},
	{"percent", "en_US", "3.5 %", "three point five percent"},
	{"percent", "en_US", "10-15%", "ten to fifteen percent"},
	{"scale", "en_US", "about 1.2bn people", "about one point two billion people"},
	{"unit", "en_US", "5 km", "five kilometres"},
	{"unit", "en_GB", "it hit 35C", "it hit thirty five degrees Celsius"},
	{"unit", "en_US", "1 kg", "one kilogram"},
	{"unit", "en_US", "70 mph", "seventy miles per hour"},
	{"unit", "en_US", "20°C", "twenty degrees Celsius"},
	{"unit", "en_US", "40,000 m3", "forty thousand cubic metres"},
	{"range", "en_US", "10–15 people", "ten to fifteen people"},
	{"range", "en_US", "10-15 people", "ten to fifteen people"},
	{"range", "en_US", "1990–95", "nineteen ninety to nineteen ninety five"},
	{"ordinal", "en_US", "the 3rd time", "the third time"},
	{"ordinal", "en_US", "the 21st century", "the twenty first century"},
	{"ordinal", "en_US", "the 112th floor", "the one hundred twelfth floor"},
	{"decade", "en_US", "in the 1990s", "in the nineteen nineties"},
	{"decade", "en_US", "in the '80s", "in the eighties"},
	{"year", "en_US", "in 1952", "in nineteen fifty two"},
	{"year", "en_US", "by 2028", "by twenty twenty eight"},
	{"year", "en_US", "in 2005", "in two thousand five"},
	{"year", "en_US", "in 2000", "in two thousand"},
	{"year", "en_US", "in 1900", "in nineteen hundred"},
	{"year", "en_US", "in 1905", "in nineteen oh five"},
	{"fraction", "en_US", "½ cup", "one half cup"},
	{"fraction", "en_US", "2½ hours", "two and a half hours"},
	{"fraction", "en_US", "3/4 of voters", "three quarters of voters"},
	{"fraction", "en_US", "open 24/7", "open twenty four seven"},
	{"abbreviation", "en_US", "Dr. Maria Lopez", "Doctor Maria Lopez"},
	{"abbreviation", "en_GB", "Dr Smith", "Doctor Smith"},
	{"abbreviation", "en_US", "Mr. and Mrs. Smith", "Mister and Missus Smith"},
	{"abbreviation", "en_US", "Ms. Jones", "Miz Jones"},
	{"abbreviation", "en_US", "St. Louis", "Saint Louis"},
	{"abbreviation", "en_US", "on Main St. today", "on Main Street today"},
	{"abbreviation", "en_US", "fruit, e.g. apples", "fruit, for example apples"},
	{"abbreviation", "en_US", "one, i.e. this", "one, that is this"},
	{"abbreviation", "en_US", "apples, pears, etc.", "apples, pears, et cetera."},
	{"abbreviation", "en_US", "Ali vs. Frazier", "Ali versus Frazier"},
	{"abbreviation", "en_US", "No. 5", "number five"},
	{"abbreviation", "en_US", "Prof. Ng", "Professor Ng"},
	{"acronym-dotted", "en_US", "the U.S. economy", "the U S economy"},
	{"acronym-dotted", "en_US", "in the U.K.", "in the U K."},
	{"all-caps-sentence", "en_US", "BREAKING NEWS FROM THE FBI", "breaking news from the F B I"},
	{"number-sign", "en_US", "#1 hit", "number one hit"},
	{"letter-digit", "en_US", "an mp3 file", "an mp three file"},
	{"digit-letter", "en_US", "a 3D film", "a three D film"},
	{"acronym", "en_US", "the FBI said", "the F B I said"},
	{"acronym", "en_US", "NASA said", "Nasa said"},
	{"acronym", "en_US", "three CEOs", "three C E O's"},
	{"acronym", "en_US", "AT&T", "A T and T"},
	{"acronym", "en_GB", "the UK's NHS", "the U K's N H S"},
	{"acronym", "en_GB", "after WWII", "after World War Two"},
	{"symbol", "en_US", "COVID-19 and U.S.-based", "Covid nineteen and U S based"},
	{"number", "en_US", "10,000 people", "ten thousand people"},
	{"number", "en_US", "3.5 points", "three point five points"},
	{"number", "en_US", "12 buses", "twelve buses"},
	{"number", "en_US", "it fell to -5", "it fell to minus five"},
	{"number", "en_US", "1,234,567", "one million two hundred thirty four thousand five hundred sixty seven"},
	{"number", "en_US", "agent 007", "agent zero zero seven"},
	{"symbol", "en_US", "salt & pepper", "salt and pepper"},
	{"symbol", "en_US", "“Hello,” she said", "Hello, she said"},
	{"symbol", "en_US", "the growers' association", "the growers association"},
	{"symbol", "en_US", "and/or", "and or"},
	{"symbol", "en_US", "he/she", "he or she"},
	{"symbol", "en_US", "a <b> c", "a less than b greater than c"},
	{"symbol", "en_US", "peace — at last", "peace, at last"},

	// German.
	{"url", "de_DE", "Mehr auf https://example.de/news", "Mehr auf example Punkt de Schrägstrich news"},
	{"email", "de_DE", "an info@example.de", "an info at example Punkt de"},
	{"domain", "de_DE", "auf spiegel.de", "auf spiegel Punkt de"},
	{"telephone", "de_DE", "+49 30 1234 5678", "plus vier neun, drei null, eins zwei drei vier, fünf sechs sieben acht"},
	{"date-iso", "de_DE", "am 2026-10-03", "am dritten Oktober zweitausendsechsundzwanzig"},
	{"date-numeric", "de_DE", "am 03.10.2026", "am dritten Oktober zweitausendsechsundzwanzig"},
	{"date-day-month", "de_DE", "Am 3. Oktober 1990", "Am dritten Oktober neunzehnhundertneunzig"},
	{"time", "de_DE", "um 10:30 Uhr", "um zehn Uhr dreißig"},
	{"currency", "de_DE", "€40", "vierzig Euro"},
	{"currency-after", "de_DE", "3,5 Mio. €", "drei Komma fünf Millionen Euro"},
	{"currency-after", "de_DE", "1,50 €", "ein Euro fünfzig"},
	{"percent", "de_DE", "65 %", "fünfundsechzig Prozent"},
	{"unit", "de_DE", "5 km", "fünf Kilometer"},
	{"range", "de_DE", "10–15 Leute", "zehn bis fünfzehn Leute"},
	{"year", "de_DE", "seit 1952", "seit neunzehnhundertzweiundfünfzig"},
	{"year", "de_DE", "bis 2028", "bis zweitausendachtundzwanzig"},
	{"abbreviation", "de_DE", "z. B. Äpfel", "zum Beispiel Äpfel"},
	{"abbreviation", "de_DE", "Dr. Müller", "Doktor Müller"},
	{"acronym-dotted", "de_DE", "die U.S.A. heute", "die U S A heute"},
	{"number-sign", "de_DE", "#1", "Nummer eins"},
	{"letter-digit", "de_DE", "mp3", "mp drei"},
	{"digit-letter", "de_DE", "3D", "drei D"},
	{"number", "de_DE", "10.000 Menschen", "zehntausend Menschen"},
	{"number", "de_DE", "3,5 Punkte", "drei Komma fünf Punkte"},
	{"number", "de_DE", "21 Busse", "einundzwanzig Busse"},
	{"number", "de_DE", "101", "einhunderteins"},
	{"symbol", "de_DE", "Salz & Pfeffer", "Salz und Pfeffer"},

	// French.
	{"url", "fr_FR", "sur https://example.fr", "sur example point fr"},
	{"email", "fr_FR", "à info@example.fr", "à info arobase example point fr"},
	{"domain", "fr_FR", "sur lemonde.fr", "sur lemonde point fr"},
	{"telephone", "fr_FR", "+33 12 34 56 78", "plus trois trois, un deux, trois quatre, cinq six, sept huit"},
	{"date-iso", "fr_FR", "le 2026-10-03", "le trois octobre deux mille vingt-six"},
	{"date-numeric", "fr_FR", "le 01/10/2026", "le premier octobre deux mille vingt-six"},
	{"date-day-month", "fr_FR", "le 3 octobre 2026", "le trois octobre deux mille vingt-six"},
	{"time", "fr_FR", "à 10h30", "à dix heures trente"},
	{"currency", "fr_FR", "€40", "quarante euros"},
	{"currency-after", "fr_FR", "3,5 millions €", "trois virgule cinq millions d'euros"},
	{"percent", "fr_FR", "65 %", "soixante-cinq pour cent"},
	{"unit", "fr_FR", "5 km", "cinq kilomètres"},
	{"range", "fr_FR", "10–15 personnes", "dix à quinze personnes"},
	{"ordinal", "fr_FR", "le 3e jour", "le troisième jour"},
	{"ordinal", "fr_FR", "le 1er jour", "le premier jour"},
	{"abbreviation", "fr_FR", "M. Dupont", "Monsieur Dupont"},
	{"acronym-dotted", "fr_FR", "les U.S.A. aujourd'hui", "les U S A aujourd'hui"},
	{"number-sign", "fr_FR", "#1", "numéro un"},
	{"letter-digit", "fr_FR", "mp3", "mp trois"},
	{"digit-letter", "fr_FR", "3D", "trois D"},
	{"number", "fr_FR", "40 000 habitants", "quarante mille habitants"},
	{"number", "fr_FR", "3,5 points", "trois virgule cinq points"},
	{"number", "fr_FR", "71 ans", "soixante et onze ans"},
	{"number", "fr_FR", "80 ans", "quatre-vingts ans"},
	{"number", "fr_FR", "92 ans", "quatre-vingt-douze ans"},
	{"symbol", "fr_FR", "sel & poivre", "sel et poivre"},

	// Language-neutral fallback: numbers are left to the engine.
	{"symbol", "es_ES", "El 3 de *octubre* (2026)", "El 3 de octubre, 2026"},
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range normCases {
		t.Run(tc.lang+"/"+tc.rule+"/"+tc.in, func(t *testing.T) {
			t.Parallel()
			if got := Normalize(tc.lang, tc.in); got != tc.want {
				t.Errorf("Normalize(%q, %q)\n got %q\nwant %q", tc.lang, tc.in, got, tc.want)
			}
		})
	}
}

// TestEveryRuleHasACase fails when a language gains a rule without a test
// case.
func TestEveryRuleHasACase(t *testing.T) {
	t.Parallel()
	have := map[string]bool{}
	for _, tc := range normCases {
		have[lookup(tc.lang).code+"/"+tc.rule] = true
	}
	for _, code := range []string{"en_US", "en_GB", "de_DE", "fr_FR", "xx"} {
		l := lookup(code)
		for _, name := range l.ruleNames() {
			if !have[l.code+"/"+name] {
				t.Errorf("%s: rule %q has no test case", code, name)
			}
		}
	}
}

func TestNumberWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fn   func(uint64) string
		n    uint64
		want string
	}{
		{"en-cardinal-zero", enCardinal, 0, "zero"},
		{"en-cardinal-teen", enCardinal, 13, "thirteen"},
		{"en-cardinal-big", enCardinal, 2_000_000_021, "two billion twenty one"},
		{"en-ordinal-twelfth", enOrdinal, 12, "twelfth"},
		{"en-ordinal-hundredth", enOrdinal, 100, "one hundred" + "th"},
		{"en-year-1066", enYear, 1066, "ten sixty six"},
		{"en-year-2010", enYear, 2010, "twenty ten"},
		{"de-cardinal-1001", deCardinal, 1001, "eintausendeins"},
		{"de-cardinal-million", deCardinal, 2_500_000, "zwei Millionen fünfhunderttausend"},
		{"de-ordinal-21", deOrdinal, 21, "einundzwanzigste"},
		{"de-ordinal-3", deOrdinal, 3, "dritte"},
		{"fr-cardinal-200", frCardinal, 200, "deux cents"},
		{"fr-cardinal-80000", frCardinal, 80000, "quatre-vingt mille"},
		{"fr-cardinal-21", frCardinal, 21, "vingt et un"},
		{"fr-ordinal-5", frOrdinal, 5, "cinquième"},
		{"fr-ordinal-9", frOrdinal, 9, "neuvième"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.fn(tc.n); got != tc.want {
				t.Errorf("%d: got %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}

func TestNormalizeNeverOutputsMarkup(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"<b>", "a<b", "x > y", "<<>>", "<script>alert(1)</script>"} {
		if got := Normalize("en_US", in); strings.ContainsAny(got, "<>") {
			t.Errorf("Normalize(%q) = %q, has markup", in, got)
		}
	}
}
