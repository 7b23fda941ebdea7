package speak

import "testing"

func TestRuleCache(t *testing.T) {
	t.Parallel()
	c := NewRuleCache(2)
	a := []Rule{{"nginx", "engine x"}}
	b := []Rule{{"kubectl", "cube control"}}
	first := c.Rules(1, a)
	if c.Rules(1, []Rule{{"nginx", "engine x"}}) != first || c.Compiles() != 1 {
		t.Fatalf("an equal set was compiled again (%d compilations)", c.Compiles())
	}
	// A set that differs only in how its fields split is another set.
	c.Rules(1, []Rule{{"nginxe", "ngine x"}})
	if c.Compiles() != 2 {
		t.Errorf("%d compilations, want 2", c.Compiles())
	}
	c.Rules(2, b)
	c.Rules(3, b) // evicts project 1, the least recently used
	if len(c.byID) != 2 || c.lru.Len() != 2 {
		t.Errorf("the cache holds %d projects, want at most 2", len(c.byID))
	}
	c.Rules(2, b)
	if c.Compiles() != 4 {
		t.Errorf("%d compilations, want 4: project 2 was used recently and kept", c.Compiles())
	}
	c.Rules(1, []Rule{{"nginxe", "ngine x"}})
	if c.Compiles() != 5 {
		t.Errorf("%d compilations, want 5: project 1 was evicted", c.Compiles())
	}
	units := Script("en_US", "", "", "We run nginx.", first)
	if len(units) != 1 || units[0].Text != "We run engine x." {
		t.Errorf("units %+v", units)
	}
}
