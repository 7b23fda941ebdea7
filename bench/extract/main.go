// Command extract compares the content finders internal/extract could use
// on its corpus: go-readability (the one it uses) and go-trafilatura, with
// and without its fallbacks. Every finder gets the same page, parsed and
// pruned the same way, and its content is rendered and scored the same way;
// only the finding differs. It prints word-level precision, recall and F1
// per page and per part of the corpus, and the time each finder took.
//
// It is a module of its own so that go-trafilatura and its two dozen
// dependencies stay out of Narrator's: run it from this folder,
//
//	go run . [-mozilla DIR] [-written DIR]
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"

	"github.com/narrator/narrator/internal/article"
	"github.com/narrator/narrator/internal/extract"
)

type finder struct {
	name string
	find extract.Finder
}

func trafilaturaFinder(fallback bool) extract.Finder {
	return func(doc *html.Node, pageURL *url.URL) (extract.Content, error) {
		r, err := trafilatura.ExtractDocument(doc, trafilatura.Options{
			OriginalURL:     pageURL,
			ExcludeComments: true,
			EnableFallback:  fallback,
			HtmlDateMode:    trafilatura.Disabled,
		})
		if err != nil {
			return extract.Content{}, err
		}
		return extract.Content{Node: r.ContentNode, Title: r.Metadata.Title, Byline: r.Metadata.Author}, nil
	}
}

func main() {
	mozilla := flag.String("mozilla", "../../third_party/readability/test-pages", "the folder of Readability's test pages")
	written := flag.String("written", "../../internal/extract/testdata/written", "the folder of the pages written for the corpus")
	flag.Parse()
	finders := []finder{
		{"readability", extract.Readability},
		{"trafilatura", trafilaturaFinder(false)},
		{"trafilatura+fallback", trafilaturaFinder(true)},
	}
	type page struct{ name, dir string }
	var pages []page
	for _, part := range []struct{ name, dir string }{{"mozilla", *mozilla}, {"written", *written}} {
		err := filepath.WalkDir(part.dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == "source.html" {
				rel, _ := filepath.Rel(part.dir, filepath.Dir(path))
				pages = append(pages, page{part.name + "/" + filepath.ToSlash(rel), filepath.Dir(path)})
			}
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "no corpus:", err)
			os.Exit(1)
		}
	}
	if len(pages) == 0 {
		fmt.Fprintln(os.Stderr, "no corpus")
		os.Exit(1)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].name < pages[j].name })
	type key struct{ finder, part string }
	totals := map[key]extract.Score{}
	took := map[string]time.Duration{}
	fmt.Printf("%-28s", "page")
	for _, f := range finders {
		fmt.Printf(" | %-22s", f.name+" P/R/F1")
	}
	fmt.Println()
	for _, p := range pages {
		name, dir := p.name, p.dir
		part, _, _ := strings.Cut(name, "/")
		src, err1 := os.ReadFile(filepath.Join(dir, "source.html"))
		want, err2 := os.ReadFile(filepath.Join(dir, "expected.txt"))
		if err1 != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, name, err1, err2)
			os.Exit(1)
		}
		u, _ := url.Parse("https://news.example/" + name)
		fmt.Printf("%-28s", name)
		for _, f := range finders {
			start := time.Now()
			a, err := extract.ExtractWith(f.find, src, "text/html", u)
			took[f.name] += time.Since(start)
			body := ""
			if err == nil {
				body = a.Body
			}
			s := extract.Compare(string(want), article.Parse(body).Text())
			totals[key{f.name, part}] = totals[key{f.name, part}].Add(s)
			totals[key{f.name, "all"}] = totals[key{f.name, "all"}].Add(s)
			fmt.Printf(" | %.3f %.3f %.3f     ", s.Precision(), s.Recall(), s.F1())
		}
		fmt.Println()
	}
	fmt.Println()
	for _, part := range []string{"mozilla", "written", "all"} {
		fmt.Printf("%-28s", "corpus: "+part)
		for _, f := range finders {
			s := totals[key{f.name, part}]
			fmt.Printf(" | %.3f %.3f %.3f     ", s.Precision(), s.Recall(), s.F1())
		}
		fmt.Println()
	}
	fmt.Printf("%-28s", "time, whole corpus")
	for _, f := range finders {
		fmt.Printf(" | %-22s", took[f.name].Round(time.Millisecond))
	}
	fmt.Println()
}
