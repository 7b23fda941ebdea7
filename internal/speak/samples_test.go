package speak

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// samplesDir holds the article samples (HTML, Markdown, plain text), each
// beside NAME.spoken.txt, how it should be read. The intelligibility test
// of internal/pipeline reads them too.
const samplesDir = "testdata/samples"

var reWord = regexp.MustCompile(`[a-z]+`)

// words tokenises like the intelligibility scorer: lower case, apostrophes
// removed, runs of a-z.
func words(s string) []string {
	return reWord.FindAllString(strings.ReplaceAll(strings.ToLower(s), "'", ""), -1)
}

// editDistance is the word-level Levenshtein distance.
func editDistance(ref, hyp []string) int {
	prev := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur := make([]int, len(hyp)+1)
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			sub := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev = cur
	}
	return prev[len(hyp)]
}

// TestSamples runs Script on every sample and compares the words of its
// units with the sample's spoken text. It reports the word accuracy and
// fails below 100%.
func TestSamples(t *testing.T) {
	t.Parallel()
	spoken, err := filepath.Glob(filepath.Join(samplesDir, "*.spoken.txt"))
	if err != nil || len(spoken) == 0 {
		t.Fatalf("no samples in %s: %v", samplesDir, err)
	}
	totalWords, totalErrs := 0, 0
	for _, sp := range spoken {
		name := strings.TrimSuffix(sp, ".spoken.txt")
		inputs, _ := filepath.Glob(name + ".*")
		inputs = slices.DeleteFunc(inputs, func(in string) bool { return in == sp })
		if len(inputs) == 0 {
			t.Errorf("%s: no article beside it", sp)
		}
		for _, in := range inputs {
			t.Run(filepath.Base(in), func(t *testing.T) {
				want := words(mustRead(t, sp))
				var texts []string
				for _, u := range Script("en_US", "", "", mustRead(t, in), nil) {
					texts = append(texts, u.Text)
				}
				got := words(strings.Join(texts, " "))
				errs := editDistance(want, got)
				totalWords += len(want)
				totalErrs += errs
				if errs > 0 {
					t.Errorf("%d word errors of %d\n got: %s\nwant: %s", errs, len(want), strings.Join(got, " "), strings.Join(want, " "))
				}
			})
		}
	}
	t.Logf("sample word accuracy: %.4f (%d errors in %d words)", 1-float64(totalErrs)/float64(max(totalWords, 1)), totalErrs, totalWords)
}

func mustRead(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read sample: %v", err)
	}
	return string(b)
}
