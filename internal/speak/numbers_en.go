package speak

import "strings"

var (
	enOnes = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
		"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	enTens       = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	enScaleWords = []string{"", "thousand", "million", "billion", "trillion", "quadrillion", "quintillion"}
	// enOrdinalWords maps a cardinal's last word to its ordinal.
	enOrdinalWords = map[string]string{
		"zero": "zeroth", "one": "first", "two": "second", "three": "third", "four": "fourth",
		"five": "fifth", "six": "sixth", "seven": "seventh", "eight": "eighth", "nine": "ninth",
		"ten": "tenth", "eleven": "eleventh", "twelve": "twelfth", "thirteen": "thirteenth",
		"fourteen": "fourteenth", "fifteen": "fifteenth", "sixteen": "sixteenth",
		"seventeen": "seventeenth", "eighteen": "eighteenth", "nineteen": "nineteenth",
		"twenty": "twentieth", "thirty": "thirtieth", "forty": "fortieth", "fifty": "fiftieth",
		"sixty": "sixtieth", "seventy": "seventieth", "eighty": "eightieth", "ninety": "ninetieth",
		"hundred": "hundredth", "thousand": "thousandth", "million": "millionth",
		"billion": "billionth", "trillion": "trillionth", "quadrillion": "quadrillionth",
		"quintillion": "quintillionth",
	}
)

// enCardinal spells n in English words, without "and" and with spaces
// rather than hyphens ("one hundred twenty three"), which every engine
// reads the same way.
func enCardinal(n uint64) string {
	if n < 20 {
		return enOnes[n]
	}
	var parts []string
	var groups []uint64
	for m := n; m > 0; m /= 1000 {
		groups = append(groups, m%1000)
	}
	for i := len(groups) - 1; i >= 0; i-- {
		g := groups[i]
		if g == 0 {
			continue
		}
		parts = append(parts, enBelowThousand(g))
		if enScaleWords[i] != "" {
			parts = append(parts, enScaleWords[i])
		}
	}
	return strings.Join(parts, " ")
}

func enBelowThousand(n uint64) string {
	var parts []string
	if n >= 100 {
		parts = append(parts, enOnes[n/100], "hundred")
		n %= 100
	}
	if n >= 20 {
		parts = append(parts, enTens[n/10])
		n %= 10
		if n > 0 {
			parts = append(parts, enOnes[n])
		}
	} else if n > 0 {
		parts = append(parts, enOnes[n])
	}
	return strings.Join(parts, " ")
}

// enOrdinal spells n as an English ordinal ("twenty first").
func enOrdinal(n uint64) string {
	c := enCardinal(n)
	i := strings.LastIndexByte(c, ' ')
	return c[:i+1] + enOrdinalWords[c[i+1:]]
}

// enYear reads a year the way English speakers do: 1952 "nineteen fifty
// two", 1900 "nineteen hundred", 1905 "nineteen oh five", 2000 "two
// thousand", 2005 "two thousand five", 2028 "twenty twenty eight".
func enYear(y uint64) string {
	if y < 1000 || y > 9999 {
		return enCardinal(y)
	}
	hi, lo := y/100, y%100
	switch {
	case y%1000 == 0:
		return enCardinal(y)
	case y >= 2000 && y < 2010:
		return enCardinal(y)
	case lo == 0:
		return enCardinal(hi) + " hundred"
	case lo < 10:
		return enCardinal(hi) + " oh " + enOnes[lo]
	default:
		return enCardinal(hi) + " " + enCardinal(lo)
	}
}
