package source_test

import (
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/source"
)

// TestParseImage: an item's image comes from media:content, media:thumbnail,
// an image enclosure, itunes:image or a JSON Feed's image, resolved against
// the feed's URL; only http and https URLs count.
func TestParseImage(t *testing.T) {
	t.Parallel()
	const rss = `<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><item><guid>a</guid>%s</item></channel></rss>`
	for _, tc := range []struct {
		name, item, want string
	}{
		{"media:content", `<media:content url="https://cdn.example/a.jpg" medium="image"/>`, "https://cdn.example/a.jpg"},
		{"media:content by type, after a video", `<media:content url="https://cdn.example/v.mp4" type="video/mp4"/><media:content url="/img/a.png" type="image/png"/>`, "https://example.org/img/a.png"},
		{"media:group", `<media:group><media:content url="https://cdn.example/g.jpg" medium="image"/></media:group>`, "https://cdn.example/g.jpg"},
		{"media:thumbnail", `<media:thumbnail url="https://cdn.example/t.jpg"/>`, "https://cdn.example/t.jpg"},
		{"enclosure", `<enclosure url="https://cdn.example/e.webp" type="image/webp" length="1"/>`, "https://cdn.example/e.webp"},
		{"audio enclosure", `<enclosure url="https://cdn.example/e.mp3" type="audio/mpeg" length="1"/>`, ""},
		{"itunes:image", `<itunes:image href="https://cdn.example/i.jpg"/>`, "https://cdn.example/i.jpg"},
		{"not http", `<media:thumbnail url="javascript:alert(1)"/><itunes:image href="data:image/png;base64,AAAA"/>`, ""},
		{"none", ``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := []byte(strings.Replace(rss, "%s", tc.item, 1))
			f, err := source.Parse(source.Document{Body: body, URL: "https://example.org/feed.xml"})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Items) != 1 || f.Items[0].Image != tc.want {
				t.Errorf("image %q, want %q", f.Items[0].Image, tc.want)
			}
		})
	}
	f, err := source.Parse(source.Document{Body: []byte(`{"version":"https://jsonfeed.org/version/1.1","items":[{"id":"a","content_text":"x","image":"https://cdn.example/j.jpg"}]}`)})
	if err != nil || len(f.Items) != 1 || f.Items[0].Image != "https://cdn.example/j.jpg" {
		t.Errorf("JSON Feed image: %v, %+v", err, f)
	}
}
