package neural

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// PiperVoicesURL is the public Piper voice repository, whose voices.json indexes every voice
// with its files' sizes and MD5 digests.
const PiperVoicesURL = "https://huggingface.co/rhasspy/piper-voices/resolve/main/"

// maxIndexBytes bounds voices.json (about 1 MB today); maxVoiceFileBytes a voice file.
const (
	maxIndexBytes     = 32 << 20
	maxVoiceFileBytes = 2 << 30
)

// indexVoice is a voice of voices.json, as much of it as Narrator reads. The Piper repository
// gives each file's MD5; a mirror may add its SHA-256 (sha256_digest), which is then checked
// too.
type indexVoice struct {
	Files map[string]struct {
		Size   int64  `json:"size_bytes"`
		MD5    string `json:"md5_digest"`
		SHA256 string `json:"sha256_digest"`
	} `json:"files"`
}

// ErrInsecureRepository is returned by Download for a repository, or a redirect, that is not
// https while DownloadOptions.AllowHTTP is false: a plain-http answer may have been changed on
// its way, index and files alike.
var ErrInsecureRepository = errors.New("the voice repository is not https")

// DownloadOptions configures Download.
type DownloadOptions struct {
	// AllowHTTP accepts a repository, and redirects, over plain http.
	AllowHTTP bool
	// IndexTimeout, if positive, bounds the fetch of the index, connection included: a
	// repository that cannot be reached is given up on after it, however long the files may
	// then take.
	IndexTimeout time.Duration
}

// Recommended is a language's recommended Piper voice: what the quickstart installs.
type Recommended struct {
	Name   string // the voice's name in the repository, such as en_US-lessac-medium
	Gender string // narrator.GenderFemale or narrator.GenderMale: a Piper voice's files do not say
}

// RecommendedVoices are the recommended Piper voices by language: single speaker, of medium
// quality (the balance of speed and sound Piper recommends), the ones the docs name.
var RecommendedVoices = map[string]Recommended{
	"en_US": {Name: "en_US-amy-medium", Gender: narrator.GenderFemale},
}

// Downloaded are the local paths of a downloaded Piper voice's files; Card is "" if the index
// lists no model card. Files says how each was checked.
type Downloaded struct {
	Model, Config, Card string
	Files               []DownloadedFile
}

// DownloadedFile is a downloaded file: where it came from, its SHA-256 as downloaded, and
// which of the index's digests it matched: "SHA-256" (and MD5, if the index gives both) or
// "MD5" alone.
type DownloadedFile struct {
	Path, URL string
	Size      int64
	SHA256    string
	Checked   string
}

// Download fetches the Piper voice name ("en_US-amy-medium") from the repository at base (a
// URL ending in "/", PiperVoicesURL or a mirror with its layout) into dir, checking each
// file's size and digests against base's voices.json: its SHA-256 where the index gives one,
// and its MD5. base must be https, and so must every redirect, unless opts.AllowHTTP:
// otherwise the error matches ErrInsecureRepository. client is the HTTP client; the caller
// bounds the whole download with ctx.
func Download(ctx context.Context, client *http.Client, base, name, dir string, opts DownloadOptions) (Downloaded, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Downloaded{}, fmt.Errorf("voice repository %q is not an http or https URL", base)
	}
	if u.Scheme != "https" && !opts.AllowHTTP {
		return Downloaded{}, fmt.Errorf("%s: %w", u.Redacted(), ErrInsecureRepository)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Scheme != "https" && !opts.AllowHTTP {
			return fmt.Errorf("redirected to %s: %w", req.URL.Redacted(), ErrInsecureRepository)
		}
		if client.CheckRedirect != nil {
			return client.CheckRedirect(req, via)
		}
		return nil
	}
	ictx, cancel := ctx, context.CancelFunc(func() {})
	if opts.IndexTimeout > 0 {
		ictx, cancel = context.WithTimeout(ctx, opts.IndexTimeout)
	}
	body, err := get(ictx, &c, u.JoinPath("voices.json"), maxIndexBytes)
	cancel()
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
		fu := u.JoinPath(p)
		b, checked, err := fetchChecked(ctx, &c, fu, f.Size, f.SHA256, f.MD5)
		if err != nil {
			return Downloaded{}, err
		}
		*dst = filepath.Join(dir, path.Base(p))
		if err := os.WriteFile(*dst, b, 0o600); err != nil {
			return Downloaded{}, err
		}
		sum := sha256.Sum256(b)
		out.Files = append(out.Files, DownloadedFile{Path: *dst, URL: fu.Redacted(), Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), Checked: checked})
	}
	if out.Model == "" || out.Config == "" {
		return Downloaded{}, fmt.Errorf("voices.json lists no %s.onnx and %s.onnx.json for %s", name, name, name)
	}
	return out, nil
}

// fetchChecked fetches u, which must have size bytes and the digests the index gives: its
// SHA-256 if given (hex), and its MD5 if given; at least one must be. It returns the body and
// which digests it was checked against.
func fetchChecked(ctx context.Context, client *http.Client, u *url.URL, size int64, wantSHA256, wantMD5 string) ([]byte, string, error) {
	if wantSHA256 == "" && wantMD5 == "" {
		return nil, "", fmt.Errorf("voices.json gives %s no digest to check it against", u)
	}
	b, err := get(ctx, client, u, size+1)
	if err != nil {
		return nil, "", err
	}
	if int64(len(b)) != size {
		return nil, "", fmt.Errorf("%s: got %d bytes; voices.json says %d", u, len(b), size)
	}
	var checked []string
	if wantSHA256 != "" {
		got := sha256.Sum256(b)
		if !strings.EqualFold(hex.EncodeToString(got[:]), wantSHA256) {
			return nil, "", fmt.Errorf("%s: got SHA-256 %x; voices.json says %s", u, got, wantSHA256)
		}
		checked = append(checked, "SHA-256")
	}
	if wantMD5 != "" {
		got := md5.Sum(b)
		if !strings.EqualFold(hex.EncodeToString(got[:]), wantMD5) {
			return nil, "", fmt.Errorf("%s: got MD5 %x; voices.json says %s", u, got, wantMD5)
		}
		checked = append(checked, "MD5")
	}
	return b, strings.Join(checked, " and "), nil
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
