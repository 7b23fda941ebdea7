package fetch

import (
	"bufio"
	"bytes"
	"strings"
)

// Robots is a parsed robots.txt (RFC 9309): the rules of the group that
// applies to one user agent.
type Robots struct {
	rules []robotsRule
}

type robotsRule struct {
	allow   bool
	pattern string
}

// maxRobotsBytes is how much of a robots.txt is read, as RFC 9309 lets a
// crawler stop at 500 KiB.
const maxRobotsBytes = 500 << 10

// ParseRobots reads a robots.txt for the user agent whose product token is
// agent ("Narrator"). The groups whose User-agent line names the token,
// case-insensitively, apply, merged; when none does, the "*" groups apply.
// Lines it does not understand are skipped, as the RFC asks.
func ParseRobots(data []byte, agent string) *Robots {
	if len(data) > maxRobotsBytes {
		data = data[:maxRobotsBytes]
	}
	agent = strings.ToLower(agent)
	var (
		named, star []robotsRule
		foundNamed  bool
		// The group being read: whether it names agent or "*", and
		// whether its User-agent lines are over (a rule was read).
		forUs, forStar, inRules bool
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxRobotsBytes+1)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		switch key {
		case "user-agent":
			if inRules {
				forUs, forStar, inRules = false, false, false
			}
			// The product token is the name up to a slash or space.
			name := strings.ToLower(value)
			if i := strings.IndexAny(name, "/ \t"); i >= 0 {
				name = name[:i]
			}
			switch name {
			case "*":
				forStar = true
			case agent:
				forUs, foundNamed = true, true
			}
		case "allow", "disallow":
			inRules = true
			if value == "" {
				continue // an empty Disallow allows everything: no rule
			}
			r := robotsRule{allow: key == "allow", pattern: normalizePath(value)}
			if forUs {
				named = append(named, r)
			}
			if forStar {
				star = append(star, r)
			}
		default:
			// Sitemap, Crawl-delay and others end no group.
		}
	}
	if foundNamed {
		return &Robots{rules: named}
	}
	return &Robots{rules: star}
}

// Allowed reports whether the group lets the agent fetch path, the URL's
// escaped path with its query ("/a/b?c=d"). The rule with the longest
// matching pattern decides; on a tie Allow wins; no match allows.
// /robots.txt itself is always allowed. The path is compared in its
// normal form (normalizePath), without dot segments, so that a path the
// site's server reads as a disallowed one ("//private/a", "/%70rivate/a",
// "/open/../private/a") is disallowed too.
func (r *Robots) Allowed(path string) bool {
	if path == "" {
		path = "/"
	}
	path = normalizePath(path)
	p, query, hasQuery := strings.Cut(path, "?")
	path = removeDotSegments(p)
	if hasQuery {
		path += "?" + query
	}
	if path == "/robots.txt" {
		return true
	}
	best, allowed := -1, true
	for _, rule := range r.rules {
		if !robotsMatch(rule.pattern, path) {
			continue
		}
		n := len(rule.pattern)
		if n > best || (n == best && rule.allow) {
			best, allowed = n, rule.allow
		}
	}
	return allowed
}

// normalizePath writes a path or pattern the one way RFC 9309 compares
// them, with the normalisations of RFC 3986 (section 6.2.2) that keep a
// path the same resource:
//   - bytes outside printable ASCII percent-encoded, and the hex digits of
//     every percent-encoding in upper case, so that "/ä", "/%c3%a4" and
//     "/%C3%A4" are the same path;
//   - the percent-encoding of an unreserved character (a letter, a digit,
//     "-", ".", "_" or "~") decoded, so that "/%6Eews" is "/news";
//   - in the part before any "?", a run of slashes written as one, as the
//     servers that read "//news" as "/news" do.
func normalizePath(p string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	inQuery := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			if d := unhex(p[i+1])<<4 | unhex(p[i+2]); isUnreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(upper(p[i+1]))
				b.WriteByte(upper(p[i+2]))
			}
			i += 2
		case c <= ' ' || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		case c == '/' && !inQuery && strings.HasSuffix(b.String(), "/"):
			// one slash of a run
		default:
			if c == '?' {
				inQuery = true
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// removeDotSegments removes the "." and ".." segments of an absolute
// path, as RFC 3986 (section 5.2.4) resolves them: "/a/./b/../c" is
// "/a/c", and no ".." climbs above "/".
func removeDotSegments(p string) string {
	if !strings.HasPrefix(p, "/") || !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return "/" + strings.Join(out, "/")
}

// isUnreserved reports whether c is an unreserved character of RFC 3986,
// which means the same encoded or not.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// robotsMatch reports whether path matches pattern, where "*" matches any
// run of characters and a final "$" anchors the end; otherwise a pattern
// matches every path it prefixes.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	rest := path[len(parts[0]):]
	if len(parts) == 1 {
		return !anchored || rest == ""
	}
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last && anchored {
			return strings.HasSuffix(rest, p)
		}
		j := strings.Index(rest, p)
		if j < 0 {
			return false
		}
		rest = rest[j+len(p):]
	}
	return true
}
