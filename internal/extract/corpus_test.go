package extract_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/article"
	"github.com/narrator/narrator/internal/extract"
)

// page is one page of the corpus: a folder holding source.html,
// expected.txt (the article's text, checked by hand) and, for some,
// expected.json (the metadata Extract must find). Its name is
// PART/NAME.
type page struct {
	name, dir string
}

// corpusParts are the corpus's parts and their folders: Readability's
// test pages are third-party and live under third_party/, where duplicate
// reports and readers know them as such.
var corpusParts = []struct{ name, dir string }{
	{"mozilla", "../../third_party/readability/test-pages"},
	{"written", "testdata/written"},
}

// extract extracts the page's source.html, as served at
// https://news.example/NAME.
func (p page) extract(tb testing.TB) (*extract.Article, error) {
	tb.Helper()
	u, _ := url.Parse("https://news.example/" + p.name)
	return extract.Extract(mustRead(tb, filepath.Join(p.dir, "source.html")), "text/html", u)
}

func corpus(tb testing.TB) []page {
	tb.Helper()
	var pages []page
	for _, part := range corpusParts {
		err := filepath.WalkDir(part.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Name() == "source.html" {
				dir := filepath.Dir(path)
				rel, err := filepath.Rel(part.dir, dir)
				if err != nil {
					return err
				}
				pages = append(pages, page{name: part.name + "/" + filepath.ToSlash(rel), dir: dir})
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].name < pages[j].name })
	return pages
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestCorpus holds Extract to the quality the issue asks of it on pages
// it has never seen: word-level F1 of at least 0.90 and precision of at
// least 0.95 over the corpus, against the hand-checked text.
func TestCorpus(t *testing.T) {
	t.Parallel()
	var total extract.Score
	for _, p := range corpus(t) {
		a, err := p.extract(t)
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		s := extract.Compare(string(mustRead(t, filepath.Join(p.dir, "expected.txt"))), article.Parse(a.Body).Text())
		total = total.Add(s)
		t.Logf("%-32s precision %.3f recall %.3f F1 %.3f", p.name, s.Precision(), s.Recall(), s.F1())
	}
	t.Logf("%-32s precision %.3f recall %.3f F1 %.3f (%d words)", "corpus", total.Precision(), total.Recall(), total.F1(), total.Want)
	if total.F1() < 0.90 || total.Precision() < 0.95 {
		t.Errorf("corpus: precision %.3f, F1 %.3f; want at least 0.95 and 0.90", total.Precision(), total.F1())
	}
}

// TestMetadata checks title, author, canonical URL and language where a
// page states what they must be.
func TestMetadata(t *testing.T) {
	t.Parallel()
	for _, p := range corpus(t) {
		raw, err := os.ReadFile(filepath.Join(p.dir, "expected.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var want struct{ Title, Author, URL, Language string }
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		a, err := p.extract(t)
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		got := struct{ Title, Author, URL, Language string }{a.Title, a.Author, a.URL, a.Language}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: metadata (-want +got):\n%s", p.name, diff)
		}
	}
}
