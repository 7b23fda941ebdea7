package speak

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Rules is a compiled set of pronunciation rules, for Script. Compiling
// costs about as much as scripting a short article once the set has
// hundreds of rules, so a set is compiled once and reused (RuleCache).
// It is read only, and safe for concurrent use.
type Rules struct {
	says map[string]string // lower-case phrase → say
	re   *regexp.Regexp    // matches any phrase, longest first; nil if none
}

// CompileRules compiles rules. Of two rules for the same phrase (in any
// letter case, white space collapsed), the first wins.
func CompileRules(rules []Rule) *Rules {
	c := &Rules{says: map[string]string{}}
	var phrases []string
	for _, r := range rules {
		p := strings.Join(strings.Fields(r.Phrase), " ")
		if p == "" {
			continue
		}
		if _, dup := c.says[strings.ToLower(p)]; dup {
			continue
		}
		c.says[strings.ToLower(p)] = r.Say
		phrases = append(phrases, p)
	}
	if len(phrases) > 0 {
		slices.SortFunc(phrases, func(a, b string) int {
			if len(a) != len(b) {
				return len(b) - len(a)
			}
			return strings.Compare(a, b)
		})
		alts := make([]string, len(phrases))
		for i, p := range phrases {
			alts[i] = strings.ReplaceAll(regexp.QuoteMeta(p), " ", `\s+`)
		}
		c.re = regexp.MustCompile(`(?i)` + strings.Join(alts, "|"))
	}
	return c
}

// RuleCache keeps the compiled rule set of the projects used last, so
// that rendering and showing a project's audios compile its rules once
// per version of the set, not each time. An entry is keyed by project and
// by a hash of the set's rules in order: an edit makes a new entry, which
// replaces the project's old one. It holds at most a fixed number of
// projects, dropping the least recently used. It is safe for concurrent
// use.
type RuleCache struct {
	max int

	mu       sync.Mutex
	lru      *list.List // of *ruleEntry, most recently used first
	byID     map[int64]*list.Element
	compiles int64
}

type ruleEntry struct {
	projectID int64
	hash      [sha256.Size]byte
	rules     *Rules
}

// DefaultRuleCacheProjects is the default size of a RuleCache, in
// projects.
const DefaultRuleCacheProjects = 256

// NewRuleCache returns a cache of the rule sets of at most max projects;
// DefaultRuleCacheProjects if max <= 0.
func NewRuleCache(max int) *RuleCache {
	if max <= 0 {
		max = DefaultRuleCacheProjects
	}
	return &RuleCache{max: max, lru: list.New(), byID: map[int64]*list.Element{}}
}

// Rules returns project projectID's rule set compiled, from the cache if
// the set is unchanged.
func (c *RuleCache) Rules(projectID int64, rules []Rule) *Rules {
	h := sha256.New()
	for _, r := range rules {
		// Lengths first: no two sets hash the same input.
		h.Write(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(len(r.Phrase))), uint64(len(r.Say))))
		h.Write([]byte(r.Phrase))
		h.Write([]byte(r.Say))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])

	c.mu.Lock()
	if el, ok := c.byID[projectID]; ok && el.Value.(*ruleEntry).hash == sum {
		c.lru.MoveToFront(el)
		compiled := el.Value.(*ruleEntry).rules
		c.mu.Unlock()
		return compiled
	}
	c.mu.Unlock()

	// Compiled outside the lock: two callers may compile the same new set
	// at once, and the last one's stays.
	compiled := CompileRules(rules)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.compiles++
	e := &ruleEntry{projectID: projectID, hash: sum, rules: compiled}
	if el, ok := c.byID[projectID]; ok {
		el.Value = e
		c.lru.MoveToFront(el)
		return compiled
	}
	c.byID[projectID] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.byID, last.Value.(*ruleEntry).projectID)
	}
	return compiled
}

// Compiles returns how many rule sets the cache has compiled.
func (c *RuleCache) Compiles() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compiles
}
