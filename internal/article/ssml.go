package article

import (
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// maxSSMLDepth bounds the element stack, so that a body of unclosed tags
// costs linear time.
const maxSSMLDepth = 64

// maxBreak bounds an SSML break, as engines and listeners do.
const maxBreak = 10 * time.Second

// ssmlFrame is one open SSML element.
type ssmlFrame struct {
	name   string
	rate   float64
	sayAs  string
	format string
	skip   bool // content not read (sub with alias, audio, desc)
}

// parseSSML reads an SSML document with a lenient tokenizer: unknown
// elements are read as their text and unbalanced tags are tolerated.
func parseSSML(body string) []Block {
	var (
		blocks []Block
		cur    *Block
		voice  string
		stack  []ssmlFrame
		extra  int // open elements beyond maxSSMLDepth
	)
	top := func() ssmlFrame {
		if len(stack) == 0 {
			return ssmlFrame{rate: 1}
		}
		return stack[len(stack)-1]
	}
	flush := func() {
		if cur != nil {
			blocks = append(blocks, *cur)
			cur = nil
		}
	}
	add := func(s Span) {
		if cur == nil {
			if s.Kind == SpanText && strings.TrimSpace(s.Text) == "" {
				return
			}
			if s.Kind == SpanSentenceEnd {
				return
			}
			if s.Kind == SpanBreak && len(blocks) > 0 {
				// A break between paragraphs belongs to the one before.
				blocks[len(blocks)-1].Spans = append(blocks[len(blocks)-1].Spans, s)
				return
			}
			cur = &Block{Kind: Paragraph, Voice: voice}
		}
		cur.Spans = append(cur.Spans, s)
	}
	push := func(f ssmlFrame) {
		if len(stack) >= maxSSMLDepth {
			extra++
			return
		}
		t := top()
		if f.rate == 0 {
			f.rate = t.rate
		}
		if f.sayAs == "" {
			f.sayAs, f.format = t.sayAs, t.format
		}
		f.skip = f.skip || t.skip
		stack = append(stack, f)
	}
	pop := func(name string) {
		if extra > 0 {
			extra--
			return
		}
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].name == name {
				stack = stack[:i]
				return
			}
		}
	}
	// boundary is what the start and the end of an element both mark: a
	// paragraph or a voice ends the block, a sentence its sentence.
	boundary := func(tag string) {
		switch tag {
		case "p", "paragraph", "voice":
			flush()
		case "s", "sentence":
			add(Span{Kind: SpanSentenceEnd})
		}
	}
	z := html.NewTokenizer(strings.NewReader(body))
	z.SetMaxBuf(0)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			flush()
			return blocks
		case html.TextToken:
			f := top()
			if f.skip {
				continue
			}
			add(Span{Kind: SpanText, Text: string(z.Text()), SayAs: f.sayAs, Format: f.format, Rate: f.rate})
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			tag := string(name)
			closed := tt == html.SelfClosingTagToken
			if tag == "break" {
				add(Span{Kind: SpanBreak, Pause: breakPause(attrs)})
				continue // always void
			}
			boundary(tag)
			if v := strings.TrimSpace(attrs["name"]); tag == "voice" && v != "" && !closed {
				voice = v
			}
			if closed {
				continue
			}
			f := ssmlFrame{name: tag}
			switch tag {
			case "say-as":
				f.sayAs = strings.ToLower(strings.TrimSpace(attrs["interpret-as"]))
				f.format = strings.ToLower(strings.TrimSpace(attrs["format"]))
				if f.sayAs == "" {
					f.sayAs = "text"
				}
			case "sub":
				if alias, ok := attrs["alias"]; ok && !top().skip {
					t := top()
					add(Span{Kind: SpanText, Text: " " + alias + " ", Rate: t.rate})
					f.skip = true
				}
			case "prosody":
				if r, ok := parseRate(attrs["rate"]); ok {
					// Nested rates multiply, within parseRate's bounds.
					f.rate = clampRate(r * top().rate)
				}
			case "audio", "desc", "metadata", "lexicon", "script", "style":
				f.skip = true
			}
			push(f)
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			pop(tag)
			boundary(tag)
			switch tag {
			case "voice":
				voice = ""
			case "say-as", "sub", "phoneme":
				// Keep the next text apart from this one.
				if cur != nil {
					add(Span{Kind: SpanText, Text: " ", Rate: top().rate})
				}
			}
		}
	}
}

// breakPause returns the pause of an SSML break: its time attribute
// ("500ms", "1.5s"), else its strength, else a medium pause.
func breakPause(attrs map[string]string) time.Duration {
	if t := strings.ToLower(strings.TrimSpace(attrs["time"])); t != "" {
		var mult float64
		num := t
		switch {
		case strings.HasSuffix(t, "ms"):
			mult, num = float64(time.Millisecond), t[:len(t)-2]
		case strings.HasSuffix(t, "s"):
			mult, num = float64(time.Second), t[:len(t)-1]
		default:
			mult = float64(time.Millisecond)
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(num), 64); err == nil && v >= 0 && v < 1e6 {
			d := time.Duration(v * mult)
			return min(d, maxBreak)
		}
	}
	switch strings.ToLower(strings.TrimSpace(attrs["strength"])) {
	case "none":
		return 0
	case "x-weak":
		return 100 * time.Millisecond
	case "weak":
		return 250 * time.Millisecond
	case "strong":
		return 750 * time.Millisecond
	case "x-strong":
		return 1200 * time.Millisecond
	}
	return 500 * time.Millisecond
}

// parseRate reads an SSML prosody rate: a keyword, a percentage ("150%",
// "+20%", "-10%") or a bare factor ("1.2"). It reports false if the value
// is not understood. The result is clamped to [0.25, 4].
func parseRate(v string) (float64, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	var r float64
	switch v {
	case "":
		return 0, false
	case "x-slow":
		r = 0.6
	case "slow":
		r = 0.8
	case "medium", "default":
		r = 1
	case "fast":
		r = 1.25
	case "x-fast":
		r = 1.5
	default:
		rel := v[0] == '+' || v[0] == '-'
		if strings.HasSuffix(v, "%") {
			f, err := strconv.ParseFloat(v[:len(v)-1], 64)
			if err != nil {
				return 0, false
			}
			if rel {
				r = 1 + f/100
			} else {
				r = f / 100
			}
		} else {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, false
			}
			if rel {
				r = 1 + f
			} else {
				r = f
			}
		}
	}
	if r != r { // NaN
		return 0, false
	}
	return clampRate(r), true
}

// clampRate bounds a speaking-rate factor to [0.25, 4].
func clampRate(r float64) float64 { return max(0.25, min(r, 4)) }
