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
		// A path the site's server reads as a disallowed one is disallowed.
		{"doubled slash", "User-agent: *\nDisallow: /nonarr\n", "//nonarr/a", false},
		{"slashes doubled inside", "User-agent: *\nDisallow: /a/b\n", "/a///b", false},
		{"encoded unreserved character", "User-agent: *\nDisallow: /nonarr\n", "/%6Eonarr/a", false},
		{"encoded unreserved in the pattern", "User-agent: *\nDisallow: /%6eonarr\n", "/nonarr/a", false},
		{"dot-dot segment", "User-agent: *\nDisallow: /nonarr\n", "/ok/../nonarr/a", false},
		{"encoded dot-dot segment", "User-agent: *\nDisallow: /nonarr\n", "/ok/%2E%2E/nonarr/a", false},
		{"dot segment", "User-agent: *\nDisallow: /nonarr/\n", "/nonarr/./a", false},
		{"dot-dot above the root", "User-agent: *\nDisallow: /nonarr\n", "/../../nonarr", false},
		{"a dot-dot that leaves the disallowed part", "User-agent: *\nDisallow: /nonarr/\n", "/nonarr/../ok", true},
		{"an encoded slash is not a slash", "User-agent: *\nDisallow: /a/b\n", "/a%2Fb", true},
		{"the query keeps its slashes", "User-agent: *\nDisallow: /s?u=a//b\n", "/s?u=a/b", true},
		{"an encoded reserved character stays encoded", "User-agent: *\nDisallow: /a?b\n", "/a%3Fb", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ParseRobots([]byte(tc.file), RobotsAgent).Allowed(tc.path); got != tc.want {
				t.Errorf("Allowed(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}
