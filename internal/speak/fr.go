package speak

import (
	"regexp"
	"strconv"
	"strings"
)

// French: numbers, money, dates, times and common abbreviations. The rules
// run in the order listed in newFrench; fr_test.go has a case for each.

// frNum is a French number: 40 000, 40.000 or 3,5.
const frNum = `(?:\d{1,3}(?:[  .]\d{3})+|\d+)(?:,\d+)?`

var (
	frOnes = []string{"zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix",
		"onze", "douze", "treize", "quatorze", "quinze", "seize", "dix-sept", "dix-huit", "dix-neuf"}
	frTens   = []string{"", "", "vingt", "trente", "quarante", "cinquante", "soixante"}
	frMonths = []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
		"octobre", "novembre", "décembre"}
)

func frBelow100(n uint64) string {
	switch {
	case n < 20:
		return frOnes[n]
	case n < 70:
		t, o := n/10, n%10
		switch o {
		case 0:
			return frTens[t]
		case 1:
			return frTens[t] + " et un"
		}
		return frTens[t] + "-" + frOnes[o]
	case n < 80:
		if n == 71 {
			return "soixante et onze"
		}
		return "soixante-" + frOnes[n-60]
	case n == 80:
		return "quatre-vingts"
	default:
		return "quatre-vingt-" + frOnes[n-80]
	}
}

// frBelow1000 spells 0 < n < 1000; plural says whether "cents" and
// "quatre-vingts" keep their s (not before "mille").
func frBelow1000(n uint64, plural bool) string {
	var parts []string
	h, r := n/100, n%100
	if h > 0 {
		c := "cent"
		if h > 1 {
			c = frOnes[h] + " cent"
			if r == 0 && plural {
				c += "s"
			}
		}
		parts = append(parts, c)
	}
	if r > 0 {
		w := frBelow100(r)
		if !plural && r == 80 {
			w = "quatre-vingt"
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, " ")
}

// frCardinal spells n in French: "quarante mille", "deux millions".
func frCardinal(n uint64) string {
	if n == 0 {
		return "zéro"
	}
	var parts []string
	for _, b := range []struct {
		v    uint64
		name string
	}{{1e18, "trillion"}, {1e15, "billiard"}, {1e12, "billion"}, {1e9, "milliard"}, {1e6, "million"}} {
		if q := n / b.v; q > 0 {
			if q == 1 {
				parts = append(parts, "un "+b.name)
			} else {
				parts = append(parts, frCardinal(q)+" "+b.name+"s")
			}
			n %= b.v
		}
	}
	if t := n / 1000; t > 0 {
		if t == 1 {
			parts = append(parts, "mille")
		} else {
			parts = append(parts, frBelow1000(t, false)+" mille")
		}
		n %= 1000
	}
	if n > 0 {
		parts = append(parts, frBelow1000(n, true))
	}
	return strings.Join(parts, " ")
}

// frOrdinal spells a French ordinal: "premier", "troisième", "vingt et unième".
func frOrdinal(n uint64) string {
	if n == 1 {
		return "premier"
	}
	c := frCardinal(n)
	switch {
	case strings.HasSuffix(c, "cinq"):
		return c + "uième"
	case strings.HasSuffix(c, "neuf"):
		return strings.TrimSuffix(c, "f") + "vième"
	case strings.HasSuffix(c, "s") && (strings.HasSuffix(c, "vingts") || strings.HasSuffix(c, "cents")):
		return strings.TrimSuffix(c, "s") + "ième"
	case strings.HasSuffix(c, "e"):
		return strings.TrimSuffix(c, "e") + "ième"
	}
	return c + "ième"
}

var frAbbrevs = map[string]string{
	"M.": "Monsieur", "MM.": "Messieurs", "Mme": "Madame", "Mmes": "Mesdames", "Mlle": "Mademoiselle",
	"Dr": "Docteur", "Dr.": "Docteur", "Pr": "Professeur", "St": "Saint", "Ste": "Sainte", "etc.": "et cetera",
	"p. ex.": "par exemple", "c.-à-d.": "c'est-à-dire", "env.": "environ", "av.": "avenue",
	"bd": "boulevard", "n°": "numéro", "No": "numéro", "Mds": "milliards", "Md": "milliard",
}

func newFrench() *lang {
	l := &lang{
		code: "fr", dayFirst: true, num: frNum, group: "  .", decimal: ",",
		cardinal: frCardinal, ordinal: frOrdinal, year: frCardinal,
		words: map[string]string{"point": "virgule", "minus": "moins", "percent": "pour cent", "to": "à",
			"dot": "point", "at": "arobase", "slash": "barre oblique", "dash": "tiret", "underscore": "tiret bas",
			"colon": "deux points", "and": "et", "by": "Par", "plus": "plus", "equals": "égale", "number": "numéro",
			"hashtag": "hashtag", "degrees": "degrés", "times": "fois", "about": "environ", "less than": "inférieur à",
			"greater than": "supérieur à", "section": "paragraphe", "or": "ou"},
		months: frMonths, monthIndex: map[string]int{},
		currencies: map[string]currency{"€": {"euro", "euros", "centime", "centimes"}, "EUR": {"euro", "euros", "centime", "centimes"},
			"$": {"dollar", "dollars", "cent", "cents"}, "USD": {"dollar", "dollars", "cent", "cents"},
			"£": {"livre", "livres", "penny", "pence"}, "CHF": {"franc suisse", "francs suisses", "centime", "centimes"}},
		scales: map[string]string{"millions": "millions", "million": "million", "milliards": "milliards",
			"milliard": "milliard", "M": "millions", "Md": "milliards", "Mds": "milliards", "k": "mille"},
		units: map[string]unit{"km": {"kilomètre", "kilomètres"}, "km/h": {"kilomètre heure", "kilomètres heure"},
			"m": {"mètre", "mètres"}, "cm": {"centimètre", "centimètres"}, "kg": {"kilogramme", "kilogrammes"},
			"g": {"gramme", "grammes"}, "l": {"litre", "litres"}, "°C": {"degré Celsius", "degrés Celsius"},
			"m²": {"mètre carré", "mètres carrés"}, "m³": {"mètre cube", "mètres cubes"}, "ha": {"hectare", "hectares"},
			"kWh": {"kilowattheure", "kilowattheures"}},
		abbrevs: frAbbrevs, acronymWords: map[string]bool{},
		money: frMoney,
		date: func(l *lang, day, month int, year, form, before string) string {
			d := frCardinal(uint64(day))
			if day == 1 {
				d = "premier"
			}
			out := d + " " + l.months[month-1]
			if year != "" {
				n, _ := strconv.ParseUint(year, 10, 64)
				out += " " + frCardinal(n)
			}
			return out
		},
	}
	for i, m := range frMonths {
		l.monthIndex[m] = i + 1
	}
	l.monthIndex["fevrier"], l.monthIndex["aout"], l.monthIndex["decembre"] = 2, 8, 12
	months := l.monthAlternation()
	l.rules = []rule{urlRule(), emailRule(), domainRule(), phoneRule(), isoDateRule(), numericDateRule(),
		{name: "date-day-month", re: regexp.MustCompile(`(?i)\b(\d{1,2})(?:er)?\s+(` + months + `)(?:\s+(\d{4})\b)?`), fn: func(l *lang, s string, m []int) string {
			d, mo := atoi(group(s, m, 1)), l.monthOf(group(s, m, 2))
			if mo == 0 || d < 1 || d > 31 || !numberContext(s, m[0], m[3]) || isLetterRune(nextRune(s, m[1])) {
				return s[m[0]:m[1]]
			}
			return pad(l.date(l, d, mo, group(s, m, 3), "dm", s[:m[0]]))
		}},
		{name: "time", re: regexp.MustCompile(`\b([01]?\d|2[0-3])\s?(?:h|:)\s?([0-5]\d)?\b`), fn: func(l *lang, s string, m []int) string {
			if digitBefore(s, m[0]) || (group(s, m, 2) == "" && strings.Contains(s[m[0]:m[1]], ":")) {
				return s[m[0]:m[1]]
			}
			h := atoi(group(s, m, 1))
			out := frCardinal(uint64(h)) + " heures"
			if h == 1 {
				out = "une heure"
			}
			if mi := atoi(group(s, m, 2)); mi > 0 {
				out += " " + frCardinal(uint64(mi))
			}
			return pad(out)
		}},
	}
	l.rules = append(l.rules, currencyRules(l)...)
	l.rules = append(l.rules, percentRule(l), unitRule(l), rangeRule(l),
		rule{name: "ordinal", re: regexp.MustCompile(`\b(\d+)(er|re|ère|e|ème|eme)\b`), fn: func(l *lang, s string, m []int) string {
			n, err := strconv.ParseUint(group(s, m, 1), 10, 64)
			if err != nil {
				return s[m[0]:m[1]]
			}
			if n == 1 && (group(s, m, 2) == "re" || group(s, m, 2) == "ère") {
				return pad("première")
			}
			return pad(frOrdinal(n))
		}},
		abbreviationRule(l, nil), dottedAcronymRule(), numberSignRule())
	l.rules = append(l.rules, letterDigitRules()...)
	l.rules = append(l.rules, numberRule(l), symbolRule())
	return l
}

func digitBefore(s string, i int) bool {
	r := prevRune(s, i)
	return r >= '0' && r <= '9'
}

// frMoney reads an amount: "quarante euros", "trois virgule cinq millions
// d'euros", "un euro cinquante".
func frMoney(l *lang, amount, scale string, c currency) string {
	if scale != "" {
		of := "de "
		if strings.ContainsAny(c.many[:1], "aeiouy") {
			of = "d'"
		}
		if scale == "mille" {
			of = ""
		}
		return l.number(amount) + " " + scale + " " + of + c.many
	}
	whole, frac, _ := strings.Cut(amount, ",")
	name := c.many
	if whole == "1" || whole == "0" {
		name = c.one
	}
	w := l.number(whole)
	if frac == "" || frac == "00" {
		return w + " " + name
	}
	if len(frac) == 2 {
		return w + " " + name + " " + frCardinal(uint64(atoi(frac)))
	}
	return l.number(amount) + " " + c.many
}
