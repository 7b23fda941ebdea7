package speak

import "strconv"

// newNeutral builds the language-neutral fallback for languages without a
// table: it keeps numbers and symbols for the engine, which reads them in
// its own language, and removes only what no engine should read.
func newNeutral() *lang {
	return &lang{
		num: `\d+`, group: "", decimal: ".",
		cardinal: func(n uint64) string { return strconv.FormatUint(n, 10) },
		ordinal:  func(n uint64) string { return strconv.FormatUint(n, 10) + "." },
		year:     func(n uint64) string { return strconv.FormatUint(n, 10) },
		words:    map[string]string{"dot": ".", "at": "@", "slash": "/", "dash": "-", "underscore": " ", "colon": ":"},
		rules: []rule{
			{name: "symbol", re: reNeutralSymbol, fn: func(l *lang, s string, m []int) string {
				switch s[m[0]:m[1]] {
				case "(", ")", "[", "]", "{", "}", "–", "—":
					return ", "
				}
				return " "
			}},
		},
	}
}
