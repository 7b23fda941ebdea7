package neural

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// PiperVoicesURL is the public Piper voice repository, whose voices.json indexes every voice
// with its files' sizes and MD5 digests.
const PiperVoicesURL = "https://huggingface.co/rhasspy/piper-voices/resolve/main/"

// maxIndexBytes bounds voices.json (about 1 MB today); maxVoiceFileBytes a voice file.
const (
	maxIndexBytes     = 32 << 20
	maxVoiceFileBytes = 2 << 30
)

// indexVoice is a voice of voices.json, as much of it as Narrator reads.
type indexVoice struct {
	Files map[string]struct {
		Size int64  `json:"size_bytes"`
		MD5  string `json:"md5_digest"`
	} `json:"files"`
}

// Downloaded are the local paths of a downloaded Piper voice's files; Card is "" if the index
// lists no model card.
type Downloaded struct {
	Model, Config, Card string
}

// Download fetches the Piper voice name ("en_US-amy-medium") from the repository at base (a
// URL ending in "/", PiperVoicesURL or a mirror with its layout) into dir, checking each
// file's size and MD5 digest against base's voices.json. client is the HTTP client; the
// caller bounds the whole download with ctx.
func Download(ctx context.Context, client *http.Client, base, name, dir string) (Downloaded, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Downloaded{}, fmt.Errorf("voice repository %q is not an http or https URL", base)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	body, err := get(ctx, client, u.JoinPath("voices.json"), maxIndexBytes)
	if err != nil {
		return Downloaded{}, err
	}
	var index map[string]indexVoice
	if err := json.Unmarshal(body, &index); err != nil {
		return Downloaded{}, fmt.Errorf("voices.json of %s: %w", u, err)
	}
	v, ok := index[name]
	if !ok {
		return Downloaded{}, fmt.Errorf("%s lists no voice %q; voice names look like en_US-amy-medium", u.JoinPath("voices.json"), name)
	}
	var out Downloaded
	for p, f := range v.Files {
		var dst *string
		switch base := path.Base(p); {
		case base == name+".onnx":
			dst = &out.Model
		case base == name+".onnx.json":
			dst = &out.Config
		case base == "MODEL_CARD":
			dst = &out.Card
		default:
			continue
		}
		if f.Size <= 0 || f.Size > maxVoiceFileBytes || strings.Contains(p, "..") {
			return Downloaded{}, fmt.Errorf("voices.json gives %s a size of %d bytes or a path Narrator will not fetch", p, f.Size)
		}
		b, err := fetchChecked(ctx, client, u.JoinPath(p), f.Size, f.MD5)
		if err != nil {
			return Downloaded{}, err
		}
		*dst = filepath.Join(dir, path.Base(p))
		if err := os.WriteFile(*dst, b, 0o600); err != nil {
			return Downloaded{}, err
		}
	}
	if out.Model == "" || out.Config == "" {
		return Downloaded{}, fmt.Errorf("voices.json lists no %s.onnx and %s.onnx.json for %s", name, name, name)
	}
	return out, nil
}

// fetchChecked fetches u, which must have size bytes with the MD5 digest sum.
func fetchChecked(ctx context.Context, client *http.Client, u *url.URL, size int64, sum string) ([]byte, error) {
	b, err := get(ctx, client, u, size+1)
	if err != nil {
		return nil, err
	}
	got := md5.Sum(b)
	if int64(len(b)) != size || !strings.EqualFold(hex.EncodeToString(got[:]), sum) {
		return nil, fmt.Errorf("%s: got %d bytes with MD5 %x; voices.json says %d bytes with %s", u, len(b), got, size, sum)
	}
	return b, nil
}

// get fetches u, refusing an answer of more than limit bytes.
func get(ctx context.Context, client *http.Client, u *url.URL, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "Narrator (voices download)")
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %s", u, res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("fetch %s: more than %d bytes", u, limit)
	}
	return b, nil
}
