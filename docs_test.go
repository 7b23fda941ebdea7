package narrator_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The docs are read by a newcomer in an afternoon, so they have budgets, in
// bytes (a KB is 1,024 bytes, as the review before each stop counts).
// Raising a budget is a decision, not a fix: cut repetition and history first
// (git keeps them).
const (
	readmeBudget  = 10 << 10  // README.md
	pageBudget    = 35 << 10  // any page under docs/
	figuresBudget = 30 << 10  // docs/figures.md
	docsBudget    = 160 << 10 // every .md file under docs/, subfolders included
)

var updateDocs = flag.Bool("update", false, "rewrite the generated parts of the docs (the Packages table of docs/architecture.md)")

// docFiles returns README.md and every .md file under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir("docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocsBudget fails when README.md, a page of docs/, docs/figures.md or
// docs/ as a whole is over its budget, naming the file and its size.
func TestDocsBudget(t *testing.T) {
	t.Parallel()
	total := 0
	for _, f := range docFiles(t) {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size := int(info.Size())
		budget := pageBudget
		switch f {
		case "README.md":
			budget = readmeBudget
		case filepath.Join("docs", "figures.md"):
			budget = figuresBudget
		}
		if f != "README.md" {
			total += size
		}
		if size > budget {
			t.Errorf("%s is %d bytes, over its budget of %d", f, size, budget)
		}
	}
	if total > docsBudget {
		t.Errorf("docs/ holds %d bytes of .md files, over its budget of %d", total, docsBudget)
	}
}

// TestReadmeQuickstart checks that the README's Quickstart is two commands:
// the service, and the whole test suite.
func TestReadmeQuickstart(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Quickstart\n")
	if !ok {
		t.Fatal("README.md has no Quickstart section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```sh\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("README.md's Quickstart has no sh block")
	}
	var commands []string
	for line := range strings.SplitSeq(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			commands = append(commands, cmd)
		}
	}
	if want := []string{"./scripts/serve.sh", "./scripts/test.sh"}; !slices.Equal(commands, want) {
		t.Errorf("README.md's Quickstart runs %q, want %q", commands, want)
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*#*\s*$`)
	mdFence   = regexp.MustCompile("^\\s*(```|~~~)")
	mdCode    = regexp.MustCompile("`[^`]*`")
)

// mdLines returns the lines of a Markdown file outside fenced code blocks.
func mdLines(data []byte) []string {
	var lines []string
	fenced := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if mdFence.MatchString(line) {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, line)
		}
	}
	return lines
}

// anchors returns the anchors GitHub gives the headings of a Markdown file.
func anchors(data []byte) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range mdLines(data) {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocLinks checks every relative link of README.md and docs/: the file
// it names exists, and so does the heading its anchor names.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := cache[path]; ok {
			return a
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cache[path] = anchors(data)
		return cache[path]
	}
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range mdLines(data) {
			line = mdCode.ReplaceAllString(line, "")
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				if path == "" {
					path = f
				} else {
					path = filepath.Join(filepath.Dir(f), path)
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: no file %s", f, target, path)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
					t.Errorf("%s: link %q: %s has no heading #%s", f, target, path, anchor)
				}
			}
		}
	}
}

const (
	packagesStart = "<!-- packages: generated by TestPackagesTable from the package comments; edit those, then run go test -run TestPackagesTable -update . -->\n"
	packagesEnd   = "<!-- end of packages -->\n"
)

// packageLines returns a table row per package of the module (bench/ and
// testdata aside): its path and the first sentence of its package comment,
// without the "Package x" or "Command x" that starts it.
func packageLines(t *testing.T) []string {
	t.Helper()
	var rows []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || p == "bench" || p == "docs" || p == "deploy" || p == "scripts") {
			return filepath.SkipDir
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		var name, text string
		fset := token.NewFileSet()
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(p, e.Name()), nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				return err
			}
			name = f.Name.Name
			if f.Doc != nil {
				text = f.Doc.Text()
			}
		}
		if name == "" {
			return nil
		}
		var dp doc.Package
		line := dp.Synopsis(text)
		if line == "" {
			t.Errorf("%s: package %s has no package comment; write one (// Package %s …)", p, name, name)
			return nil
		}
		for _, prefix := range []string{"Package " + name + " ", "Command " + filepath.Base(p) + " "} {
			line = strings.TrimPrefix(line, prefix)
		}
		path := "`" + filepath.ToSlash(p) + "`"
		if p == "." {
			path = "`narrator` (root)"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s |\n", path, strings.ReplaceAll(line, "|", `\|`)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestPackagesTable checks the Packages table of docs/architecture.md
// against the package comments: a package missing from the table, or whose
// line no longer says what its comment's first sentence says, fails it, and
// the test prints the table to paste (or, with -update, writes it).
func TestPackagesTable(t *testing.T) {
	const file = "docs/architecture.md"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := bytes.Cut(data, []byte(packagesStart))
	_, after, ok2 := bytes.Cut(rest, []byte(packagesEnd))
	if !ok || !ok2 {
		t.Fatalf("%s has no generated Packages table between the lines\n%s…\n%s", file, packagesStart, packagesEnd)
	}
	var want strings.Builder
	want.WriteString("| package | what it is |\n|---|---|\n")
	for _, row := range packageLines(t) {
		want.WriteString(row)
	}
	table := want.String()
	if string(rest[:len(rest)-len(after)-len(packagesEnd)]) == table {
		return
	}
	if *updateDocs {
		out := slices.Concat(before, []byte(packagesStart), []byte(table), []byte(packagesEnd), after)
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the Packages table is stale or misses a package; run go test -run TestPackagesTable -update . or paste:\n%s%s%s", file, packagesStart, table, packagesEnd)
}
