package fetch

import "testing"

func TestRobots(t *testing.T) {
	t.Parallel()
	const file = `# comments and unknown lines are skipped
Sitemap: https://example.com/sitemap.xml

User-agent: *
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$
Disallow: /search?

User-agent: Googlebot
Disallow: /
`
	const named = `User-agent: *
Disallow: /

User-agent: narrator/2.0
User-agent: OtherBot
Disallow: /drafts/
Allow: /drafts/public$

User-agent: Narrator
Crawl-delay: 10
Disallow: /tmp
`
	for _, tc := range []struct {
		name, file, path string
		want             bool
	}{
		{"no rule matches", file, "/news/1", true},
		{"prefix", file, "/private/page", false},
		{"longer allow wins", file, "/private/open/page", true},
		{"wildcard and anchor", file, "/docs/a.pdf", false},
		{"anchor not at end", file, "/docs/a.pdf.html", true},
		{"query", file, "/search?q=x", false},
		{"robots.txt always", "User-agent: *\nDisallow: /\n", "/robots.txt", true},
		{"empty disallow allows", "User-agent: *\nDisallow:\n", "/x", true},
		{"no group for us", "User-agent: Googlebot\nDisallow: /\n", "/x", true},
		{"named groups merge, star ignored", named, "/news", true},
		{"named group rule", named, "/drafts/x", false},
		{"named anchored allow", named, "/drafts/public", true},
		{"second named group", named, "/tmp/x", false},
		{"tie goes to allow", "User-agent: *\nDisallow: /a\nAllow: /a\n", "/a", true},
		{"rules before any group are nobody's", "Disallow: /\n", "/x", true},
		{"a raw UTF-8 pattern matches its encoding", "User-agent: *\nDisallow: /ä\n", "/%c3%a4/x", false},
		{"encodings compare in any case", "User-agent: *\nDisallow: /%c3%a4\n", "/%C3%A4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ParseRobots([]byte(tc.file), RobotsAgent).Allowed(tc.path); got != tc.want {
				t.Errorf("Allowed(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}
