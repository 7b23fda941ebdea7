package speak

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// English: the rules, in the order they run. Each has a test case in
// en_test.go named after it.

// enNum is an English number: 40,000 or 3.5 or 1,234.56.
const enNum = `(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?`

var enMonths = []string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// enAcronymWords are acronyms read as words, not spelled.
var enAcronymWords = []string{"NASA", "NATO", "UNESCO", "UNICEF", "OPEC", "AIDS", "COVID", "LASER",
	"RADAR", "SCUBA", "FIFA", "UEFA", "NAFTA", "ASEAN", "ISIS", "GIF", "JPEG", "PIN", "RAM", "ROM",
	"SIM", "SWAT", "DARPA", "FEMA", "OSHA", "CERN", "IKEA", "LEGO", "NASDAQ", "SARS", "MERS", "OFCOM",
	"OFSTED", "BAFTA", "ASAP", "YOLO", "FOMO", "WIFI", "ZIP", "SAT", "GOP", "NIMBY", "INTERPOL",
	"EUROPOL", "FRONTEX", "BREXIT", "UNIX", "LINUX", "SQL", "ESPN"}

// enSpelled are acronyms always spelled, even in a sentence in capitals.
var enSpelled = map[string]bool{"FBI": true, "CIA": true, "BBC": true, "USA": true, "UK": true, "EU": true,
	"UN": true, "NHS": true, "CEO": true, "CFO": true, "CTO": true, "GDP": true, "IMF": true, "US": true,
	"TV": true, "PM": true, "MP": true, "MPS": true, "AI": true, "IT": false, "DNA": true, "HIV": true,
	"NBA": true, "NFL": true, "NYC": true, "LA": true, "DC": true, "PhD": true, "CNN": true, "ABC": true,
	"CBS": true, "NBC": true, "BMW": true, "HSBC": true, "IBM": true, "HP": true, "WHO": true, "WTO": true,
	"ID": true, "IP": true, "PC": true, "PR": true, "ATM": true, "SUV": true, "UFO": true, "VIP": true}

var enAbbrevs = map[string]string{
	"Dr.": "Doctor", "Dr": "Doctor", "Mr.": "Mister", "Mr": "Mister", "Mrs.": "Missus", "Mrs": "Missus",
	"Ms.": "Miz", "Ms": "Miz", "Prof.": "Professor", "St.": "Saint", "St": "Saint",
	"Sen.": "Senator", "Rep.": "Representative", "Gov.": "Governor", "Gen.": "General",
	"Col.": "Colonel", "Lt.": "Lieutenant", "Sgt.": "Sergeant", "Capt.": "Captain", "Cmdr.": "Commander",
	"Adm.": "Admiral", "Rev.": "Reverend", "Hon.": "Honourable", "Pres.": "President", "Supt.": "Superintendent",
	"Jr.": "Junior", "Sr.": "Senior", "Ave.": "Avenue", "Rd.": "Road", "Blvd.": "Boulevard", "Mt.": "Mount",
	"Ft.": "Fort", "Ln.": "Lane", "Sq.": "Square", "Inc.": "Incorporated", "Ltd.": "Limited", "Ltd": "Limited",
	"Co.": "Company", "Corp.": "Corporation", "Dept.": "Department", "Univ.": "University",
	"e.g.": "for example", "E.g.": "For example", "i.e.": "that is", "I.e.": "That is",
	"etc.": "et cetera", "vs.": "versus", "vs": "versus", "v.": "versus", "cf.": "compare",
	"approx.": "approximately", "a.k.a.": "also known as", "aka": "also known as", "et al.": "and others",
	"No.": "number", "Nos.": "numbers", "no.": "number", "Fig.": "Figure", "fig.": "figure",
	"p.": "page", "pp.": "pages", "vol.": "volume", "Vol.": "Volume", "ch.": "chapter", "Ch.": "Chapter",
	"est.": "established", "Ph.D.": "P h D", "PhD": "P h D", "Jan.": "January", "Feb.": "February",
	"Mar.": "March", "Apr.": "April", "Aug.": "August", "Sep.": "September", "Sept.": "September",
	"Oct.": "October", "Nov.": "November", "Dec.": "December", "Mon.": "Monday", "Tue.": "Tuesday",
	"Tues.": "Tuesday", "Wed.": "Wednesday", "Thu.": "Thursday", "Thur.": "Thursday", "Thurs.": "Thursday",
	"Fri.": "Friday", "Sat.": "Saturday", "Sun.": "Sunday", "min.": "minutes", "hr.": "hour", "hrs.": "hours",
}

var enWords = map[string]string{
	"point": "point", "minus": "minus", "percent": "percent", "to": "to", "dot": "dot", "at": "at",
	"slash": "slash", "dash": "dash", "underscore": "underscore", "colon": "colon", "and": "and",
	"by": "By", "plus": "plus", "equals": "equals", "number": "number", "hashtag": "hashtag",
	"degrees": "degrees", "times": "times", "about": "about", "less than": "less than",
	"greater than": "greater than", "section": "section", "or": "or",
}

var enCurrencies = map[string]currency{
	"$": {"dollar", "dollars", "cent", "cents"}, "US$": {"dollar", "dollars", "cent", "cents"},
	"A$":  {"Australian dollar", "Australian dollars", "cent", "cents"},
	"C$":  {"Canadian dollar", "Canadian dollars", "cent", "cents"},
	"NZ$": {"New Zealand dollar", "New Zealand dollars", "cent", "cents"},
	"HK$": {"Hong Kong dollar", "Hong Kong dollars", "cent", "cents"},
	"£":   {"pound", "pounds", "penny", "pence"}, "€": {"euro", "euros", "cent", "cents"},
	"¥": {"yen", "yen", "", ""}, "₹": {"rupee", "rupees", "paisa", "paise"},
	"USD": {"dollar", "dollars", "cent", "cents"}, "EUR": {"euro", "euros", "cent", "cents"},
	"GBP": {"pound", "pounds", "penny", "pence"}, "JPY": {"yen", "yen", "", ""},
	"CHF": {"Swiss franc", "Swiss francs", "centime", "centimes"},
}

var enScales = map[string]string{
	"thousand": "thousand", "million": "million", "billion": "billion", "trillion": "trillion",
	"k": "thousand", "K": "thousand", "m": "million", "mn": "million", "M": "million",
	"bn": "billion", "b": "billion", "B": "billion", "tn": "trillion", "trn": "trillion",
}

var enUnits = map[string]unit{
	"km": {"kilometre", "kilometres"}, "km/h": {"kilometre per hour", "kilometres per hour"},
	"kph": {"kilometre per hour", "kilometres per hour"}, "mph": {"mile per hour", "miles per hour"},
	"m": {"metre", "metres"}, "cm": {"centimetre", "centimetres"}, "mm": {"millimetre", "millimetres"},
	"m²": {"square metre", "square metres"}, "m2": {"square metre", "square metres"},
	"km²": {"square kilometre", "square kilometres"}, "km2": {"square kilometre", "square kilometres"},
	"m³": {"cubic metre", "cubic metres"}, "m3": {"cubic metre", "cubic metres"},
	"kg": {"kilogram", "kilograms"}, "g": {"gram", "grams"}, "mg": {"milligram", "milligrams"},
	"lb": {"pound", "pounds"}, "lbs": {"pounds", "pounds"}, "oz": {"ounce", "ounces"},
	"mi": {"mile", "miles"}, "ft": {"foot", "feet"}, "yd": {"yard", "yards"},
	"ha": {"hectare", "hectares"}, "l": {"litre", "litres"}, "L": {"litre", "litres"},
	"ml": {"millilitre", "millilitres"}, "mL": {"millilitre", "millilitres"},
	"°C": {"degree Celsius", "degrees Celsius"}, "C": {"degree Celsius", "degrees Celsius"}, "°F": {"degree Fahrenheit", "degrees Fahrenheit"},
	"ºC": {"degree Celsius", "degrees Celsius"}, "°": {"degree", "degrees"},
	"kW": {"kilowatt", "kilowatts"}, "kWh": {"kilowatt hour", "kilowatt hours"},
	"MW": {"megawatt", "megawatts"}, "GW": {"gigawatt", "gigawatts"}, "W": {"watt", "watts"},
	"V": {"volt", "volts"}, "Hz": {"hertz", "hertz"}, "kHz": {"kilohertz", "kilohertz"},
	"MHz": {"megahertz", "megahertz"}, "GHz": {"gigahertz", "gigahertz"},
	"KB": {"kilobyte", "kilobytes"}, "MB": {"megabyte", "megabytes"}, "GB": {"gigabyte", "gigabytes"},
	"TB": {"terabyte", "terabytes"}, "ms": {"millisecond", "milliseconds"},
	"hr": {"hour", "hours"}, "hrs": {"hours", "hours"}, "min": {"minute", "minutes"},
	"mins": {"minutes", "minutes"}, "sec": {"second", "seconds"}, "secs": {"seconds", "seconds"},
}

// newEnglish builds English; dayFirst selects British numeric dates.
func newEnglish(dayFirst bool) *lang {
	l := &lang{
		code: "en", dayFirst: dayFirst, num: enNum, group: ",", decimal: ".",
		cardinal: enCardinal, ordinal: enOrdinal, year: enYear,
		words: enWords, months: enMonths, monthIndex: map[string]int{},
		currencies: enCurrencies, scales: enScales, units: enUnits, abbrevs: enAbbrevs,
		acronymWords: map[string]bool{},
		date:         enDate, time: enTime, money: enMoney,
	}
	for i, m := range enMonths {
		l.monthIndex[strings.ToLower(m)] = i + 1
		l.monthIndex[strings.ToLower(m[:3])] = i + 1
	}
	l.monthIndex["sept"] = 9
	for _, a := range enAcronymWords {
		l.acronymWords[a] = true
	}
	months := l.monthAlternation()
	l.rules = []rule{
		urlRule(),
		emailRule(),
		domainRule(),
		phoneRule(),
		isoDateRule(),
		numericDateRule(),
		{name: "date-month-day", re: regexp.MustCompile(`(?i)\b(` + months + `)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?`), fn: enMonthDay},
		{name: "date-day-month", re: regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(` + months + `)\b\.?(?:,?\s+(\d{4})\b)?`), fn: enDayMonth},
		{name: "time-ampm", re: regexp.MustCompile(`\b(\d{1,2})(?:[:.](\d{2}))?\s?([AaPp])\.?\s?([Mm])\b\.?`), fn: enTimeAMPM},
		{name: "time-clock", re: regexp.MustCompile(`\b([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?\b`), fn: enClock},
	}
	l.rules = append(l.rules, currencyRules(l)...)
	l.rules = append(l.rules,
		percentRule(l),
		rule{name: "scale", re: regexp.MustCompile(`(` + enNum + `)\s?(bn|tn|trn)\b`), fn: func(l *lang, s string, m []int) string {
			if !numberContext(s, m[0], m[3]) {
				return s[m[0]:m[1]]
			}
			return pad(l.number(group(s, m, 1)) + " " + l.scales[group(s, m, 2)])
		}},
		unitRule(l),
		rangeRule(l),
		rule{name: "ordinal", re: regexp.MustCompile(`(?i)\b(` + enNum + `)(st|nd|rd|th)\b`), fn: func(l *lang, s string, m []int) string {
			n, err := strconv.ParseUint(strings.ReplaceAll(group(s, m, 1), ",", ""), 10, 64)
			if err != nil || strings.Contains(group(s, m, 1), ".") {
				return s[m[0]:m[1]]
			}
			return pad(l.ordinal(n))
		}},
		rule{name: "decade", re: regexp.MustCompile(`(?:\b(1[1-9]|20)|'|’|\b)(\d)0s\b`), fn: enDecade},
		yearRule(),
		rule{name: "fraction", re: regexp.MustCompile(`(\d*)\s?([½¼¾⅓⅔⅛])|\b(\d{1,2})/(\d{1,2})\b`), fn: enFraction},
		abbreviationRule(l, enAbbrevSpecial),
		dottedAcronymRule(),
		rule{name: "all-caps-sentence", re: regexp.MustCompile(`(?s)^.*$`), fn: enShouting},
		numberSignRule(),
	)
	l.rules = append(l.rules, letterDigitRules()...)
	l.rules = append(l.rules,
		rule{name: "acronym", re: regexp.MustCompile(`\b([A-Z][A-Z&]*[A-Z])(s?)\b`), fn: enAcronym},
		numberRule(l),
		symbolRule(),
	)
	return l
}

// enDate reads a date: en_US "October third, twenty twenty six", en_GB
// "the third of October twenty twenty six".
func enDate(l *lang, day, month int, year, form, before string) string {
	y := ""
	if year != "" {
		n, _ := strconv.ParseUint(year, 10, 64)
		y = l.year(n)
	}
	mn := l.months[month-1]
	d := l.ordinal(uint64(day))
	var out string
	if form == "dm" || (form == "num" && l.dayFirst) {
		the := "the "
		if strings.HasSuffix(strings.ToLower(strings.TrimSpace(before)), "the") {
			the = ""
		}
		out = the + d + " of " + mn
		if y != "" {
			out += " " + y
		}
		return out
	}
	out = mn + " " + d
	if y != "" {
		out += ", " + y
	}
	return out
}

func enMonthDay(l *lang, s string, m []int) string {
	name, day := group(s, m, 1), atoi(group(s, m, 2))
	mo := l.monthOf(name)
	// "may 3" in lower case is a verb and a number; "March 40" is no date.
	if mo == 0 || day < 1 || day > 31 || !unicode.IsUpper([]rune(name)[0]) || unicode.IsDigit(nextRune(s, m[1])) {
		return s[m[0]:m[1]]
	}
	return pad(l.date(l, day, mo, group(s, m, 3), "md", s[:m[0]]))
}

func enDayMonth(l *lang, s string, m []int) string {
	day, name := atoi(group(s, m, 1)), group(s, m, 2)
	mo := l.monthOf(name)
	if mo == 0 || day < 1 || day > 31 || !unicode.IsUpper([]rune(name)[0]) || !numberContext(s, m[0], m[3]) {
		return s[m[0]:m[1]]
	}
	return pad(l.date(l, day, mo, group(s, m, 3), "dm", s[:m[0]]))
}

// enTime reads a clock time: "nine a m", "ten thirty", "ten oh five".
func enTime(l *lang, h, m int, ampm string) string {
	var out string
	switch {
	case m == 0 && ampm != "":
		out = l.cardinal(uint64(h))
	case m == 0 && h <= 12:
		out = l.cardinal(uint64(h)) + " o'clock"
	case m == 0:
		out = l.cardinal(uint64(h)) + " hundred"
	case m < 10:
		out = l.cardinal(uint64(h)) + " oh " + l.cardinal(uint64(m))
	default:
		out = l.cardinal(uint64(h)) + " " + l.cardinal(uint64(m))
	}
	if h == 0 && m != 0 {
		out = "zero " + strings.TrimPrefix(out, "zero ")
	}
	if ampm != "" {
		out += " " + ampm[:1] + " " + ampm[1:]
	}
	return out
}

func enTimeAMPM(l *lang, s string, m []int) string {
	h, mi := atoi(group(s, m, 1)), 0
	if g := group(s, m, 2); g != "" {
		mi = atoi(g)
	}
	if h > 24 || mi > 59 || !numberContext(s, m[0], m[3]) {
		return s[m[0]:m[1]]
	}
	ap := strings.ToLower(group(s, m, 3)) + "m"
	out := l.time(l, h, mi, ap)
	if strings.HasSuffix(s[m[0]:m[1]], ".") && restIsEnd(s[m[1]:]) {
		out += "."
	}
	return pad(out)
}

func enClock(l *lang, s string, m []int) string {
	if !numberContext(s, m[0], m[1]) {
		return s[m[0]:m[1]]
	}
	return pad(l.time(l, atoi(group(s, m, 1)), atoi(group(s, m, 2)), ""))
}

// enMoney reads an amount: "three point five million dollars", "one dollar
// fifty cents", "forty euros".
func enMoney(l *lang, amount, scale string, c currency) string {
	if scale != "" {
		return l.number(amount) + " " + scale + " " + c.many
	}
	whole, frac, _ := strings.Cut(amount, ".")
	name := c.many
	if strings.ReplaceAll(whole, ",", "") == "1" && frac == "" {
		name = c.one
	}
	if len(frac) != 2 || c.minorMany == "" {
		return l.number(amount) + " " + name
	}
	cents := atoi(frac)
	w := strings.ReplaceAll(whole, ",", "")
	if w == "1" {
		name = c.one
	}
	minor := c.minorMany
	if cents == 1 {
		minor = c.minorOne
	}
	switch {
	case cents == 0:
		return l.number(whole) + " " + name
	case w == "0" || w == "":
		return l.cardinal(uint64(cents)) + " " + minor
	default:
		return l.number(whole) + " " + name + " " + l.cardinal(uint64(cents)) + " " + minor
	}
}

func enDecade(l *lang, s string, m []int) string {
	cent, tens := group(s, m, 1), atoi(group(s, m, 2))
	if unicode.IsDigit(prevRune(s, m[0])) {
		return s[m[0]:m[1]]
	}
	var out string
	switch {
	case tens == 0 && cent == "20":
		out = "two thousands"
	case tens == 0 && cent != "":
		n, _ := strconv.ParseUint(cent, 10, 64)
		out = l.cardinal(n) + " hundreds"
	case tens == 1:
		out = "tens"
		if cent != "" {
			n, _ := strconv.ParseUint(cent, 10, 64)
			out = l.cardinal(n) + " tens"
		}
	case tens == 0:
		return s[m[0]:m[1]]
	default:
		t := strings.TrimSuffix(enTens[tens], "y") + "ies"
		if cent != "" {
			n, _ := strconv.ParseUint(cent, 10, 64)
			t = l.cardinal(n) + " " + t
		}
		out = t
	}
	return pad(out)
}

var enFractions = map[string]string{"½": "a half", "¼": "a quarter", "¾": "three quarters", "⅓": "a third", "⅔": "two thirds", "⅛": "an eighth"}

func enFraction(l *lang, s string, m []int) string {
	if g := group(s, m, 2); g != "" {
		f := enFractions[g]
		if w := group(s, m, 1); w != "" {
			return pad(l.number(w) + " and " + f)
		}
		return pad(strings.Replace(strings.Replace(f, "a ", "one ", 1), "an ", "one ", 1))
	}
	a, b := atoi(group(s, m, 3)), atoi(group(s, m, 4))
	if !numberContext(s, m[0], m[1]) || prevRune(s, m[0]) == '/' || nextRune(s, m[1]) == '/' {
		return s[m[0]:m[1]]
	}
	if a == 24 && b == 7 {
		return pad("twenty four seven")
	}
	if b < 2 || b > 10 || a >= b*3 || a == 0 {
		return pad(l.cardinal(uint64(a)) + " " + l.cardinal(uint64(b)))
	}
	den := map[int]string{2: "half", 3: "third", 4: "quarter", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth", 9: "ninth", 10: "tenth"}[b]
	if a != 1 {
		if b == 2 {
			den = "halve"
		}
		den += "s"
	}
	return pad(l.cardinal(uint64(a)) + " " + den)
}

// enAbbrevSpecial picks the reading of abbreviations that depend on the
// context: St. (Saint before a name, Street after one), Dr. (Doctor before
// a name, Drive after one), No. (number only before a digit), p. (page only
// before a digit), v. (versus only between names).
func enAbbrevSpecial(abbr, before, after string) (string, bool) {
	nextWord := strings.TrimLeft(after, " .")
	nextCap := nextWord != "" && unicode.IsUpper([]rune(nextWord)[0])
	nextDigit := nextWord != "" && unicode.IsDigit([]rune(nextWord)[0])
	b := strings.TrimRight(before, " ")
	prevCap, prevDigit := false, false
	if i := strings.LastIndexAny(b, " \t"); b != "" {
		w := b[i+1:]
		if w != "" {
			r := []rune(w)
			prevCap = unicode.IsUpper(r[0]) && len(strings.TrimSpace(b[:i+1])) > 0 && !strings.HasSuffix(w, ".")
			prevDigit = unicode.IsDigit(r[len(r)-1])
		}
	}
	switch strings.TrimSuffix(abbr, ".") {
	case "St":
		if (prevCap || prevDigit) && !nextCap {
			return "Street", true
		}
		if (prevCap || prevDigit) && nextCap && strings.HasSuffix(abbr, ".") && !strings.HasPrefix(strings.TrimLeft(after, " "), "Paul") {
			return "Street", true
		}
		if !strings.HasSuffix(abbr, ".") && !nextCap {
			return "", false
		}
		return "Saint", true
	case "Dr":
		if prevCap && !nextCap {
			return "Drive", true
		}
		if !strings.HasSuffix(abbr, ".") && !nextCap {
			return "", false
		}
		return "Doctor", true
	case "Mr", "Mrs", "Ms":
		if !strings.HasSuffix(abbr, ".") && !nextCap {
			return "", false
		}
	case "No", "Nos", "no", "p", "pp":
		if !nextDigit {
			return "", false
		}
	case "v":
		if !nextCap {
			return "", false
		}
	case "Sun", "Sat", "Wed", "Mon", "Fri", "Jan", "Mar", "Sep", "Dec":
		// Only with a date or a time nearby: "Sat." alone may be a verb.
		return "", true
	}
	return "", true
}

// enShouting lower-cases words in capitals when most of a sentence is in
// capitals (a shouted headline), keeping known acronyms.
func enShouting(l *lang, s string, m []int) string {
	t := s[m[0]:m[1]]
	caps, lower := 0, 0
	for _, w := range strings.FieldsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if strings.ToUpper(w) == w && len(w) > 1 {
			caps++
		} else if strings.ToLower(w) != w || len(w) > 1 {
			lower++
		}
	}
	if caps < 3 || caps <= lower {
		return t
	}
	return reCapsWord.ReplaceAllStringFunc(t, func(w string) string {
		if enSpelled[w] || l.acronymWords[w] {
			return w
		}
		return strings.ToLower(w)
	})
}

var reCapsWord = regexp.MustCompile(`\b[A-Z]{2,}\b`)

// enAcronym spells acronyms ("FBI" → "F B I") unless they are read as
// words (NASA → "Nasa"); long capitalised words with vowels are read as
// words too.
func enAcronym(l *lang, s string, m []int) string {
	w, plural := group(s, m, 1), group(s, m, 2)
	if say, ok := enAcronymSay[w]; ok {
		return " " + say + plural + " "
	}
	if l.acronymWords[w] {
		return w[:1] + strings.ToLower(w[1:]) + plural
	}
	if !enSpelled[w] && len(w) >= 6 && strings.ContainsAny(w, "AEIOUY") && !strings.Contains(w, "&") {
		return w[:1] + strings.ToLower(w[1:]) + plural
	}
	var letters []string
	for _, r := range w {
		if r == '&' {
			letters = append(letters, l.word("and"))
			continue
		}
		letters = append(letters, string(r))
	}
	out := strings.Join(letters, " ")
	if plural != "" {
		out += "'s"
	}
	if n := nextRune(s, m[1]); n == '\'' || n == '’' {
		return " " + out // keep "U K's" together
	}
	return " " + out + " "
}

// enAcronymSay are acronyms read as a phrase.
var enAcronymSay = map[string]string{"WWI": "World War One", "WWII": "World War Two", "WW2": "World War Two"}
