package web

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"time"

	"github.com/narrator/narrator"
)

// chartDays is how many days the plays chart of a project shows.
const chartDays = 30

// Geometry of the plays chart, in SVG user units.
const (
	chartWidth  = 600.0
	chartHeight = 150.0
	chartTop    = 18.0 // room for the maximum's label
	chartBottom = 22.0 // room for the dates
)

// listensData is the listening figures of an audio or a project.
type listensData struct {
	Counts narrator.ListenCounts
	// Reach is where listeners stop: the share of plays that reached each
	// quarter, as whole percentages, with a bar width for each.
	Reach []reachRow
	Chart *playsChart // nil on an audio's page
}

// reachRow is one quarter of the "where listeners stop" figures.
type reachRow struct {
	Label   string
	Percent int
	Width   float64 // of a 100-unit bar
}

// playsChart is a bar chart of plays per day, drawn as SVG on the server.
type playsChart struct {
	Width, Height, Base float64
	Bars                []chartBar
	Max, Total          int64
	First, Last         string // the first and last days, as labels
	Summary             string // the chart in words, for screen readers
}

// chartBar is one day of the chart.
type chartBar struct {
	X, Y, W, H float64
	Day        string
	Plays      int64
}

// newListensData returns the figures of counts, with a chart of days if
// days is not nil.
func newListensData(c narrator.ListenCounts) listensData {
	d := listensData{Counts: c}
	reach := c.Reach()
	for i, label := range []string{"25 %", "50 %", "75 %", "The end"} {
		d.Reach = append(d.Reach, reachRow{Label: label, Percent: int(reach[i]*100 + 0.5), Width: reach[i] * 100})
	}
	return d
}

// newPlaysChart draws the plays of the chartDays days up to and including
// the UTC day of now.
func newPlaysChart(days []narrator.DailyListens, now time.Time) *playsChart {
	last := narrator.ListenDay(now)
	first := last.AddDate(0, 0, -(chartDays - 1))
	plays := make([]int64, chartDays)
	for _, d := range days {
		i := int(d.Day.Sub(first).Hours()/24 + 0.5)
		if i >= 0 && i < chartDays {
			plays[i] += d.Counts.Plays
		}
	}
	c := &playsChart{Width: chartWidth, Height: chartHeight, Base: chartHeight - chartBottom,
		First: first.Format("2 Jan"), Last: last.Format("2 Jan")}
	for _, n := range plays {
		c.Max = max(c.Max, n)
		c.Total += n
	}
	slot := chartWidth / chartDays
	area := c.Base - chartTop
	for i, n := range plays {
		h := 0.0
		if c.Max > 0 {
			h = float64(n) / float64(c.Max) * area
		}
		if n > 0 && h < 1 {
			h = 1 // a day with plays is never invisible
		}
		c.Bars = append(c.Bars, chartBar{
			X: float64(i)*slot + 1, W: slot - 2, Y: c.Base - h, H: h,
			Day: first.AddDate(0, 0, i).Format("Mon 2 Jan 2006"), Plays: n,
		})
	}
	c.Summary = fmt.Sprintf("Plays per day from %s to %s: %d in all, at most %d on one day.", c.First, c.Last, c.Total, c.Max)
	return c
}

// embedSnippets are the lines a publisher pastes to embed an audio's player.
type embedSnippets struct {
	IFrame, Script string
	By             string // "external ID" or "article URL"; "" when the audio has neither
}

// newEmbedSnippets returns the snippets of an audio, served from base
// (scheme://host).
func newEmbedSnippets(base string, a *narrator.Audio) embedSnippets {
	var query, attr, by string
	switch {
	case a.ExternalID != "":
		query = "external_id=" + url.QueryEscape(a.ExternalID)
		attr = fmt.Sprintf(` data-external-id="%s"`, html.EscapeString(a.ExternalID))
		by = "external ID"
	case a.ArticleURL != "":
		query = "url=" + url.QueryEscape(a.ArticleURL)
		attr = fmt.Sprintf(` data-url="%s"`, html.EscapeString(a.ArticleURL))
		by = "article URL"
	default:
		return embedSnippets{}
	}
	src := fmt.Sprintf("%s/embed/%d?%s", base, a.ProjectID, query)
	return embedSnippets{
		IFrame: fmt.Sprintf(`<iframe src="%s" title="Listen to this article" width="100%%" height="260" style="border:0" allow="autoplay"></iframe>`, html.EscapeString(src)),
		Script: fmt.Sprintf(`<script src="%s/embed.js" data-project="%d"%s async></script>`, html.EscapeString(base), a.ProjectID, attr),
		By:     by,
	}
}

// baseURL is the scheme://host the service is reached at: the public
// URL's, or else the request's.
func (s *Server) baseURL(r *http.Request) string {
	if s.publicOrigin != "" {
		return s.publicOrigin
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
