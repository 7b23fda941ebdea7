package extract

import (
	"html"
	"regexp"
	"strings"

	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// dropped are the elements whose content is never read: media and their
// captions, code that runs, navigation, forms and page furniture.
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Figure: true, atom.Figcaption: true, atom.Img: true, atom.Picture: true,
	atom.Svg: true, atom.Math: true, atom.Video: true, atom.Audio: true, atom.Iframe: true,
	atom.Object: true, atom.Embed: true, atom.Canvas: true, atom.Nav: true, atom.Aside: true,
	atom.Footer: true, atom.Form: true, atom.Button: true, atom.Input: true, atom.Select: true,
	atom.Textarea: true, atom.Label: true, atom.Dialog: true, atom.Menu: true, atom.Head: true,
	atom.Caption: true,
}

// boilerplate matches a class or id token of page furniture that a
// library may leave inside an article: share bars, adverts, comments,
// captions and credits, related and recommended lists, newsletter boxes.
var boilerplate = regexp.MustCompile(`(?i)(?:^|[-_\s])(?:share|sharing|social|related|comments?|advert|advertisement|ads?|adslot|promo|newsletter|caption|credit|subscribe|signup|sponsor(?:ed)?|outbrain|taboola|recommend(?:ed|ations)?|more-?stories|breadcrumbs?|byline|author-?bio|toolbar|disclaimer)(?:[-_\s]|$)`)

// statePrefix matches a class that says what an element has or is in,
// rather than what it is.
var statePrefix = regexp.MustCompile(`^(?:has|no|with|without|is|show|hide)[-_]`)

// furnitureRoles are ARIA landmark roles that are never the article.
var furnitureRoles = map[string]bool{"navigation": true, "complementary": true, "contentinfo": true, "banner": true, "search": true}

// junk matches a whole paragraph that is page furniture in words.
var junk = regexp.MustCompile(`(?i)^(?:advertisement|ad|sponsored|story continues below(?: advertisement)?|continue reading(?: the main story)?|scroll to continue(?: with content)?|(?:related|read more|see also|more|recommended|watch|listen)\s*:.*|powered by \S+|share (?:this|on)\b.*|click here to .*|sign up for (?:our|the) \S*\s*newsletter.*|subscribe to (?:our|the) \S*\s*newsletter.*|\[[^\[\]]*\]|(?:图注|图片来源|原标题|责任编辑)[:：].*|图为.*|\[责任编辑[:：][^\]]*\])$`)

// relatedHeading matches a heading over a list of links to other articles
// inside the article's markup: the heading and the paragraphs or list
// items of links under it are dropped.
var relatedHeading = regexp.MustCompile(`(?i)^(?:related(?: (?:stories|articles|coverage|content|links|reading|posts|news))?|more (?:on|about) (?:this|the) (?:story|topic|subject)|more from [^.!?]{1,60}|read more|recommended(?: for you| reading)?|you (?:may|might) (?:also )?(?:like|be interested in|have missed)|most (?:read|popular|viewed|shared)|trending(?: now)?|top stories|latest (?:news|stories)|see also|further reading)\s*:?$`)

// credit matches a paragraph that credits a picture or states the
// copyright, when it is short.
var credit = regexp.MustCompile(`(?i)^(?:(?:photo(?:graph)?s?|image|picture|illustration|video|credit|source)\s*(?:by|:|：|\|)|©|copyright\b|\(?(?:ap|afp|reuters|getty images|epa)\b[^.]*(?:photo|images?)\)?$|all rights reserved\.?$)`)

// promo matches a call to sign up or subscribe, when it is short.
var promo = regexp.MustCompile(`(?i)^(?:sign up|subscribe|register|follow us|get (?:our|the) [^.]{0,40}(?:newsletter|briefing|app))\b.*(?:newsletter|briefing|inbox|email|e-mail|free|daily|weekly|updates|alerts|here|now)\b`)

// dateWords matches a word of a dateline: a month, a number, a time of
// day, a time zone, or a word that introduces them.
var dateWords = regexp.MustCompile(`(?i)^(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:sday)?|wed(?:nesday)?|thu(?:rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?|\d{1,4}(?:st|nd|rd|th)?|\d{1,2}[:/.]\d{1,2}(?:[:/.]\d{2,4})?|am|pm|a\.m|p\.m|[a-z]{1,2}[sd]?t|gmt|utc|updated|published|posted|last|modified|on|at)$`)

// dateline reports whether a paragraph is only a date and time.
func dateline(text string) bool {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == ',' || r == '|' || r == '\u00b7' || r == '—' || r == '–'
	})
	if len(words) == 0 || len(words) > 12 {
		return false
	}
	for _, w := range words {
		if !dateWords.MatchString(strings.Trim(w, ".()")) {
			return false
		}
	}
	return true
}

// block is one block of the rendered body.
type block struct {
	tag   string // h2…h6, p, li, pre
	list  string // ul or ol, for li
	quote bool
	text  string
	// links is true when the block's text is all, or nearly all, link
	// text: an entry of a list of other articles, when it follows one's
	// heading.
	links bool
}

// renderer walks the content and gathers blocks.
type renderer struct {
	inLink   int // the depth of <a> elements around the current node
	linkText int // bytes of link text in the block being gathered
	most     int // the text removable furniture holds at most
	blocks   []block
	cur      strings.Builder
	ctx      block // tag, list and quote of the text being gathered
}

// render returns the body HTML of the content under n, without a heading
// that repeats title, and how many words it holds.
func render(n *nethtml.Node, title string) (string, int) {
	r := &renderer{ctx: block{tag: "p"}, most: len(text(n)) / 2}
	r.walk(n, block{tag: "p"})
	r.flush()
	var out strings.Builder
	list, count := "", 0
	related := false // after a "Related stories" heading, until the article resumes
	for i, b := range r.blocks {
		if i == 0 && b.tag[0] == 'h' && strings.EqualFold(b.text, title) {
			continue
		}
		if b.tag[0] == 'h' {
			related = relatedHeading.MatchString(b.text)
		} else if related && b.links {
			continue // the links under it
		} else {
			related = false
		}
		if related {
			continue
		}
		count += len(words(b.text))
		if b.list != list {
			if list != "" {
				out.WriteString("</" + list + ">\n")
			}
			if b.list != "" {
				out.WriteString("<" + b.list + ">\n")
			}
			list = b.list
		}
		line := "<" + b.tag + ">" + html.EscapeString(b.text) + "</" + b.tag + ">"
		if b.quote {
			line = "<blockquote>" + line + "</blockquote>"
		}
		out.WriteString(line + "\n")
	}
	if list != "" {
		out.WriteString("</" + list + ">\n")
	}
	return out.String(), count
}

// flush ends the block being gathered.
func (r *renderer) flush() {
	t := r.cur.String()
	r.cur.Reset()
	links := len(strings.TrimSpace(t)) > 0 && r.linkText*10 >= len(strings.TrimSpace(t))*8
	r.linkText = 0
	if r.ctx.tag != "pre" {
		t = clean(t)
	} else {
		t = strings.Trim(t, "\n")
	}
	trimmed := strings.TrimSpace(t)
	if trimmed == "" || (r.ctx.tag != "pre" && (junk.MatchString(trimmed) || dateline(trimmed) ||
		(credit.MatchString(trimmed) && len(words(trimmed)) <= 20) || (promo.MatchString(trimmed) && len(words(trimmed)) <= 25))) {
		return
	}
	b := r.ctx
	b.text, b.links = t, links
	r.blocks = append(r.blocks, b)
}

// start ends the block being gathered and starts one of kind c.
func (r *renderer) start(c block) {
	r.flush()
	r.ctx = c
}

// prune removes page furniture (by its attributes: see furniture) from the
// page before a finder reads it, since finders drop the class and id
// attributes that tell it apart. The elements that hold the whole page or
// its article are kept, whatever their class, and so is any element that
// holds them or more than half of the page's text: a wrapper named after
// adverts is still a wrapper.
func prune(doc *nethtml.Node) {
	pruneUnder(doc, len(text(doc))/2)
}

func pruneUnder(n *nethtml.Node, most int) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == nethtml.ElementNode {
			switch {
			case c.DataAtom == atom.Html, c.DataAtom == atom.Body, c.DataAtom == atom.Main, c.DataAtom == atom.Article:
				pruneUnder(c, most)
			case removable(c, most):
				n.RemoveChild(c)
			default:
				pruneUnder(c, most)
			}
		}
		c = next
	}
}

// removable reports whether n is furniture that holds neither the article
// nor more than most bytes of text.
func removable(n *nethtml.Node, most int) bool {
	return furniture(n) && !holdsArticle(n) && len(text(n)) <= most
}

// holdsArticle reports whether n is or holds an element that marks itself
// as the article or the page's main content.
func holdsArticle(n *nethtml.Node) bool {
	if n.Type == nethtml.ElementNode {
		role := strings.ToLower(attr(n, "role"))
		if n.DataAtom == atom.Article || n.DataAtom == atom.Main || role == "main" || role == "article" ||
			strings.EqualFold(attr(n, "itemprop"), "articleBody") {
			return true
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if holdsArticle(c) {
			return true
		}
	}
	return false
}

// furniture reports whether n is page furniture by its attributes.
func furniture(n *nethtml.Node) bool {
	id := strings.ToLower(strings.TrimSpace(attr(n, "id")))
	tokens := strings.Fields(strings.ToLower(attr(n, "class")))
	// An id of three words or more is an anchor made from a heading
	// ("sharing-mutable-history", "related-work-in-progress"), not a name
	// for furniture.
	if id != "" && len(strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' })) < 3 {
		tokens = append(tokens, id)
	}
	for _, token := range tokens {
		// "has-comments", "no_caption", "is-sponsored-free": a state of
		// the element, not what it is.
		if statePrefix.MatchString(token) {
			continue
		}
		// Captions hide in camel case too: imgCaption, photoCaption.
		if boilerplate.MatchString(token) || strings.Contains(token, "caption") {
			return true
		}
	}
	if furnitureRoles[strings.ToLower(attr(n, "role"))] || strings.EqualFold(attr(n, "aria-hidden"), "true") {
		return true
	}
	for _, a := range n.Attr {
		if a.Key == "hidden" {
			return true
		}
	}
	style := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

// headings maps heading elements to the tag they become: the title is
// the audio's, so the body's headings start at h2.
var headings = map[atom.Atom]string{
	atom.H1: "h2", atom.H2: "h2", atom.H3: "h3", atom.H4: "h4", atom.H5: "h5", atom.H6: "h6",
}

// walk gathers n's blocks; c is the block its text belongs to.
func (r *renderer) walk(n *nethtml.Node, c block) {
	switch n.Type {
	case nethtml.TextNode:
		if r.ctx != c {
			r.start(c)
		}
		r.cur.WriteString(n.Data)
		if r.inLink > 0 {
			r.linkText += len(n.Data)
		}
		return
	case nethtml.ElementNode:
	case nethtml.DocumentNode:
	default:
		return
	}
	if n.Type == nethtml.ElementNode {
		if dropped[n.DataAtom] || removable(n, r.most) {
			return
		}
		switch n.DataAtom {
		case atom.Br:
			r.start(c)
			return
		case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header,
			atom.Dd, atom.Dt, atom.Address, atom.Details, atom.Summary, atom.Center, atom.Hgroup, atom.Tr:
			if c.tag == "li" || c.tag[0] == 'h' {
				break // inside a list item or heading, still its text
			}
			c = block{tag: "p", quote: c.quote}
			r.start(c)
			defer r.start(c)
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			c = block{tag: headings[n.DataAtom], quote: c.quote}
			r.start(c)
			defer r.start(block{tag: "p", quote: c.quote})
		case atom.Pre:
			c = block{tag: "pre", quote: c.quote}
			r.start(c)
			defer r.start(block{tag: "p", quote: c.quote})
		case atom.Blockquote:
			c = block{tag: "p", quote: true}
			r.start(c)
			defer r.start(block{tag: "p"})
		case atom.Ul, atom.Ol:
			c.list = n.Data
		case atom.Li:
			list := c.list
			if list == "" {
				list = "ul"
			}
			c = block{tag: "li", list: list, quote: c.quote}
			r.start(c)
			defer r.start(block{tag: "p", quote: c.quote})
		case atom.Td, atom.Th:
			defer r.cur.WriteString(" ")
		case atom.A:
			r.inLink++
			defer func() { r.inLink-- }()
		}
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		r.walk(ch, c)
	}
}
