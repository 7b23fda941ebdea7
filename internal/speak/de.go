package speak

import (
	"regexp"
	"strconv"
	"strings"
)

// German: numbers, money, dates, times and common abbreviations. The rules
// run in the order listed in newGerman; de_test.go has a case for each.

// deNum is a German number: 40.000 or 3,5 or 1.234,56.
const deNum = `(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?`

var (
	deOnes = []string{"null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun",
		"zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"}
	deTens   = []string{"", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"}
	deMonths = []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
		"Oktober", "November", "Dezember"}
)

// deBelow100 spells 0 < n < 100; "eins" becomes "ein" inside compounds.
func deBelow100(n uint64, final bool) string {
	if n < 20 {
		if n == 1 && !final {
			return "ein"
		}
		return deOnes[n]
	}
	t, o := n/10, n%10
	if o == 0 {
		return deTens[t]
	}
	one := deOnes[o]
	if o == 1 {
		one = "ein"
	}
	return one + "und" + deTens[t]
}

func deBelow1000(n uint64, final bool) string {
	var sb strings.Builder
	if h := n / 100; h > 0 {
		if h == 1 {
			sb.WriteString("ein")
		} else {
			sb.WriteString(deOnes[h])
		}
		sb.WriteString("hundert")
	}
	if r := n % 100; r > 0 {
		sb.WriteString(deBelow100(r, final))
	}
	return sb.String()
}

// deCardinal spells n in German: "vierzigtausend", "eine Million zwei".
func deCardinal(n uint64) string {
	if n == 0 {
		return "null"
	}
	var parts []string
	big := []struct {
		v         uint64
		one, many string
	}{{1e18, "eine Trillion", "Trillionen"}, {1e15, "eine Billiarde", "Billiarden"}, {1e12, "eine Billion", "Billionen"},
		{1e9, "eine Milliarde", "Milliarden"}, {1e6, "eine Million", "Millionen"}}
	for _, b := range big {
		if q := n / b.v; q > 0 {
			if q == 1 {
				parts = append(parts, b.one)
			} else {
				parts = append(parts, deCardinal(q)+" "+b.many)
			}
			n %= b.v
		}
	}
	if n > 0 {
		var sb strings.Builder
		if t := n / 1000; t > 0 {
			sb.WriteString(deBelow1000(t, false))
			sb.WriteString("tausend")
		}
		if r := n % 1000; r > 0 {
			sb.WriteString(deBelow1000(r, true))
		}
		parts = append(parts, sb.String())
	}
	return strings.Join(parts, " ")
}

// deOrdinal spells the German ordinal stem in its "-te" form: "dritte",
// "zwanzigste".
func deOrdinal(n uint64) string {
	switch n {
	case 1:
		return "erste"
	case 3:
		return "dritte"
	case 7:
		return "siebte"
	case 8:
		return "achte"
	}
	c := deCardinal(n)
	if n%100 >= 20 || n%100 == 0 && n >= 100 {
		return c + "ste"
	}
	switch {
	case strings.HasSuffix(c, "eins"):
		return strings.TrimSuffix(c, "eins") + "erste"
	case strings.HasSuffix(c, "drei"):
		return c[:len(c)-len("drei")] + "dritte"
	case strings.HasSuffix(c, "sieben"):
		return c[:len(c)-len("sieben")] + "siebte"
	}
	return c + "te"
}

// deYear reads 1100-1999 in hundreds ("neunzehnhundertzweiundfünfzig").
func deYear(y uint64) string {
	if y >= 1100 && y < 2000 {
		return deBelow100(y/100, true) + "hundert" + map[bool]string{true: "", false: deBelow100(y%100, true)}[y%100 == 0]
	}
	return deCardinal(y)
}

var deAbbrevs = map[string]string{
	"z. B.": "zum Beispiel", "z.B.": "zum Beispiel", "d. h.": "das heißt", "d.h.": "das heißt",
	"u. a.": "unter anderem", "u.a.": "unter anderem", "usw.": "und so weiter", "bzw.": "beziehungsweise",
	"ca.": "circa", "Dr.": "Doktor", "Prof.": "Professor", "Hr.": "Herr", "Fr.": "Frau", "Nr.": "Nummer",
	"St.": "Sankt", "Str.": "Straße", "vgl.": "vergleiche", "evtl.": "eventuell", "ggf.": "gegebenenfalls",
	"inkl.": "inklusive", "zzgl.": "zuzüglich", "Mio.": "Millionen", "Mrd.": "Milliarden",
	"Jh.": "Jahrhundert", "etc.": "et cetera", "bspw.": "beispielsweise", "sog.": "sogenannte",
}

func newGerman() *lang {
	l := &lang{
		code: "de", dayFirst: true, num: deNum, group: ".", decimal: ",",
		cardinal: deCardinal, ordinal: deOrdinal, year: deYear,
		words: map[string]string{"point": "Komma", "minus": "minus", "percent": "Prozent", "to": "bis",
			"dot": "Punkt", "at": "at", "slash": "Schrägstrich", "dash": "Bindestrich", "underscore": "Unterstrich",
			"colon": "Doppelpunkt", "and": "und", "by": "Von", "plus": "plus", "equals": "gleich", "number": "Nummer",
			"hashtag": "Hashtag", "degrees": "Grad", "times": "mal", "about": "etwa", "less than": "kleiner als",
			"greater than": "größer als", "section": "Paragraf", "or": "oder"},
		months: deMonths, monthIndex: map[string]int{},
		currencies: map[string]currency{"€": {"Euro", "Euro", "Cent", "Cent"}, "EUR": {"Euro", "Euro", "Cent", "Cent"},
			"$": {"Dollar", "Dollar", "Cent", "Cent"}, "USD": {"Dollar", "Dollar", "Cent", "Cent"},
			"£": {"Pfund", "Pfund", "Pence", "Pence"}, "CHF": {"Franken", "Franken", "Rappen", "Rappen"}},
		scales: map[string]string{"Mio.": "Millionen", "Millionen": "Millionen", "Million": "Million",
			"Mrd.": "Milliarden", "Milliarden": "Milliarden", "Tsd.": "tausend"},
		units: map[string]unit{"km": {"Kilometer", "Kilometer"}, "km/h": {"Kilometer pro Stunde", "Kilometer pro Stunde"},
			"m": {"Meter", "Meter"}, "cm": {"Zentimeter", "Zentimeter"}, "kg": {"Kilogramm", "Kilogramm"},
			"g": {"Gramm", "Gramm"}, "l": {"Liter", "Liter"}, "°C": {"Grad Celsius", "Grad Celsius"},
			"m²": {"Quadratmeter", "Quadratmeter"}, "m³": {"Kubikmeter", "Kubikmeter"}, "ha": {"Hektar", "Hektar"},
			"kWh": {"Kilowattstunde", "Kilowattstunden"}, "Std.": {"Stunde", "Stunden"}, "Min.": {"Minute", "Minuten"}},
		abbrevs: deAbbrevs, acronymWords: map[string]bool{},
		money: deMoney,
		date: func(l *lang, day, month int, year, form, before string) string {
			end := "r"
			b := strings.ToLower(strings.TrimSpace(before))
			for _, p := range []string{"am", "vom", "zum", "bis zum", "seit dem", "dem", "den", "ab dem"} {
				if strings.HasSuffix(b, " "+p) || b == p {
					end = "n"
				}
			}
			out := deOrdinal(uint64(day)) + end + " " + l.months[month-1]
			if year != "" {
				n, _ := strconv.ParseUint(year, 10, 64)
				out += " " + deYear(n)
			}
			return out
		},
	}
	for i, m := range deMonths {
		l.monthIndex[strings.ToLower(m)] = i + 1
	}
	for k, v := range map[string]int{"jan": 1, "feb": 2, "mär": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "okt": 10, "nov": 11, "dez": 12} {
		l.monthIndex[k] = v
	}
	months := l.monthAlternation()
	l.rules = []rule{urlRule(), emailRule(), domainRule(), phoneRule(), isoDateRule(), numericDateRule(),
		{name: "date-day-month", re: regexp.MustCompile(`(?i)\b(\d{1,2})\.\s?(` + months + `)\b\.?(?:\s+(\d{4})\b)?`), fn: func(l *lang, s string, m []int) string {
			d, mo := atoi(group(s, m, 1)), l.monthOf(group(s, m, 2))
			if mo == 0 || d < 1 || d > 31 {
				return s[m[0]:m[1]]
			}
			return pad(l.date(l, d, mo, group(s, m, 3), "dm", s[:m[0]]))
		}},
		{name: "time", re: regexp.MustCompile(`\b([01]?\d|2[0-3])[:.]([0-5]\d)(?:\s?Uhr\b)?`), fn: func(l *lang, s string, m []int) string {
			if !numberContext(s, m[0], m[1]) || (!strings.HasSuffix(s[m[0]:m[1]], "Uhr") && s[m[2]+len(group(s, m, 1))] == '.') {
				return s[m[0]:m[1]]
			}
			h, mi := atoi(group(s, m, 1)), atoi(group(s, m, 2))
			hs := deCardinal(uint64(h))
			if h == 1 {
				hs = "ein"
			}
			out := hs + " Uhr"
			if mi > 0 {
				out += " " + deCardinal(uint64(mi))
			}
			return pad(out)
		}},
	}
	l.rules = append(l.rules, currencyRules(l)...)
	l.rules = append(l.rules, percentRule(l), unitRule(l), rangeRule(l), yearRule(),
		abbreviationRule(l, nil), dottedAcronymRule(), numberSignRule())
	l.rules = append(l.rules, letterDigitRules()...)
	l.rules = append(l.rules, numberRule(l), symbolRule())
	return l
}

// deMoney reads an amount: "vierzig Euro", "drei Komma fünf Millionen Euro",
// "ein Euro fünfzig".
func deMoney(l *lang, amount, scale string, c currency) string {
	if scale != "" {
		if amount == "1" && scale == "Millionen" {
			return "eine Million " + c.many
		}
		if amount == "1" && scale == "Milliarden" {
			return "eine Milliarde " + c.many
		}
		return l.number(amount) + " " + scale + " " + c.many
	}
	whole, frac, _ := strings.Cut(amount, ",")
	w := l.number(whole)
	if strings.ReplaceAll(whole, ".", "") == "1" {
		w = "ein"
	}
	if frac == "" || frac == "-" || frac == "00" {
		return w + " " + c.one
	}
	if len(frac) == 2 {
		return w + " " + c.one + " " + deCardinal(uint64(atoi(frac)))
	}
	return l.number(amount) + " " + c.many
}
