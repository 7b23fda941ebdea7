// Package s3 stores media objects in a bucket of an S3-compatible object
// store (AWS S3, MinIO, versitygw, …), optionally under a key prefix.
//
// It satisfies the same contract as localfs, checked by blobtest: keys are
// checked with narrator.ValidateBlobKey before any request; Put streams with
// bounded memory and stores nothing if it fails, because an object appears
// only when its single PUT or its multipart upload completes; Open returns a
// reader that can Seek, so http.ServeContent can answer Range requests from
// it; Delete and DeletePrefix are idempotent. Objects are stored with the
// Content-Type given by narrator.MediaContentType.
//
// This is the only package that imports the S3 SDK.
package s3

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/ctxio"
)

const (
	// partSize is the size of each part of a multipart upload, and so the
	// memory one large Put holds. Without it the SDK, which cannot know a
	// stream's length, would buffer parts large enough for a 5 TiB object.
	// 8 MiB × S3's 10,000 parts allows objects up to about 80 GiB.
	partSize = 8 << 20

	// singlePutSize is the largest object Put sends in one request. Most
	// media (HLS segments, playlists) are smaller, and one PUT costs one
	// round trip where a multipart upload costs three.
	singlePutSize = 1 << 20
)

// Options configures a Store. ParseURL builds it from a URL.
type Options struct {
	Bucket string // bucket name; it must exist
	// Prefix, if not empty, is prepended with a "/" to every key, so that
	// the store owns only that part of the bucket. It must be a valid blob
	// key (narrator.ValidateBlobKey).
	Prefix string
	// Endpoint is the server's base URL, "https://host[:port]" or
	// "http://host[:port]". Empty means AWS S3.
	Endpoint string
	// Region is the bucket's region. Empty lets the client look it up.
	Region string
	// PathStyle addresses the bucket in the URL path
	// (https://host/bucket/key), as most S3-compatible servers need,
	// instead of in the host name (https://bucket.host/key).
	PathStyle bool
	// AccessKeyID and SecretAccessKey are the credentials requests are
	// signed with. Both are required.
	AccessKeyID     string
	SecretAccessKey string
}

// defaultEndpoint is AWS S3's global endpoint, used when Options.Endpoint
// is empty.
const defaultEndpoint = "https://s3.amazonaws.com"

// ParseURL parses a media URL of the form
//
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=REGION&path_style=true]
//
// into Options. endpoint is the server's http or https base URL (default:
// AWS S3); region the bucket's region; path_style (a boolean) selects
// path-style addressing, which most S3-compatible servers need. Any other
// query parameter is an error. The credentials come from getenv's
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, which must both be set; they
// are never read from the URL. Errors say which part of the URL is wrong and
// never repeat it whole.
func ParseURL(raw string, getenv func(string) string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url's error repeats the whole URL; say only what is wrong.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return Options{}, fmt.Errorf("invalid URL: %w", err)
	}
	if u.Scheme != "s3" {
		return Options{}, fmt.Errorf("scheme %q is not s3 (want s3://BUCKET/PREFIX)", u.Scheme)
	}
	if u.Opaque != "" {
		return Options{}, errors.New("missing // after s3: (want s3://BUCKET/PREFIX)")
	}
	if u.User != nil {
		return Options{}, errors.New("credentials do not belong in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return Options{}, errors.New("a fragment (#…) is not allowed")
	}
	o := Options{
		Bucket:          u.Host,
		Prefix:          strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/"),
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
	}

	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Options{}, fmt.Errorf("query: %w", err)
	}
	for name, values := range query {
		if len(values) != 1 {
			return Options{}, fmt.Errorf("query parameter %q is given %d times", name, len(values))
		}
		v := values[0]
		if v == "" {
			return Options{}, fmt.Errorf("query parameter %q is empty", name)
		}
		switch name {
		case "endpoint":
			o.Endpoint = v
		case "region":
			o.Region = v
		case "path_style":
			if o.PathStyle, err = strconv.ParseBool(v); err != nil {
				return Options{}, fmt.Errorf("path_style %q is not a boolean (want true or false)", v)
			}
		default:
			return Options{}, fmt.Errorf("unknown query parameter %q (known: endpoint, region, path_style)", name)
		}
	}
	if _, err := o.validate(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// validate checks o and returns the parsed endpoint.
func (o Options) validate() (*url.URL, error) {
	if o.Bucket == "" {
		return nil, errors.New("missing bucket name (want s3://BUCKET/PREFIX)")
	}
	if err := s3utils.CheckValidBucketNameStrict(o.Bucket); err != nil {
		return nil, fmt.Errorf("bucket name %q: %w", o.Bucket, err)
	}
	if o.Prefix != "" {
		if err := narrator.ValidateBlobKey(o.Prefix); err != nil {
			return nil, fmt.Errorf("prefix %q: must be slash-separated names, none empty or starting with a dot", o.Prefix)
		}
	}
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = defaultEndpoint
	}
	e, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return nil, errors.New("endpoint is not a URL (want one like https://s3.example.com:9000)")
	case e.User != nil:
		return nil, errors.New("endpoint: credentials do not belong in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	case e.Scheme != "http" && e.Scheme != "https":
		return nil, fmt.Errorf("endpoint %q: scheme must be http or https", endpoint)
	case e.Host == "" || e.Opaque != "" || (e.Path != "" && e.Path != "/") || e.RawQuery != "" || e.Fragment != "":
		return nil, fmt.Errorf("endpoint %q: want only a scheme and a host, like https://s3.example.com:9000", endpoint)
	}
	if o.AccessKeyID == "" || o.SecretAccessKey == "" {
		return nil, errors.New("credentials missing: set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return e, nil
}

// Store is a media store in an S3 bucket. It is safe for concurrent use.
type Store struct {
	// client writes, deletes and lists, with the SDK's retries; reads
	// opens objects and pings for requests that wait on the answer,
	// with fewer tries and a shorter dial (readRetries).
	client, reads *minio.Client
	bucket        string
	prefix        string // "" or ends with "/"
}

// New returns a Store for the bucket and prefix of opts. It checks that the
// bucket exists and that the credentials may see it.
func New(ctx context.Context, opts Options) (*Store, error) {
	endpoint, err := opts.validate()
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	lookup := minio.BucketLookupAuto
	if opts.PathStyle {
		lookup = minio.BucketLookupPath
	}
	secure := endpoint.Scheme == "https"
	clientOpts := minio.Options{
		Creds:        credentials.NewStaticV4(opts.AccessKeyID, opts.SecretAccessKey, ""),
		Secure:       secure,
		Region:       opts.Region,
		BucketLookup: lookup,
	}
	client, err := minio.New(endpoint.Host, &clientOpts)
	if err != nil {
		return nil, fmt.Errorf("s3: client for %s: %w", endpoint.Host, err)
	}
	transport, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("s3: transport for %s: %w", endpoint.Host, err)
	}
	transport.DialContext = (&net.Dialer{Timeout: readDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	clientOpts.Transport, clientOpts.MaxRetries = transport, readRetries
	reads, err := minio.New(endpoint.Host, &clientOpts)
	if err != nil {
		return nil, fmt.Errorf("s3: client for %s: %w", endpoint.Host, err)
	}
	ok, err := client.BucketExists(ctx, opts.Bucket)
	if err != nil {
		return nil, fmt.Errorf("s3: check bucket %q at %s: %w", opts.Bucket, endpoint.Host, err)
	}
	if !ok {
		return nil, fmt.Errorf("s3: bucket %q does not exist at %s", opts.Bucket, endpoint.Host)
	}
	s := &Store{client: client, reads: reads, bucket: opts.Bucket}
	if opts.Prefix != "" {
		s.prefix = opts.Prefix + "/"
	}
	return s, nil
}

// objectName validates key and returns its object name in the bucket.
func (s *Store) objectName(key string) (string, error) {
	if err := narrator.ValidateBlobKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

// Ping checks that the bucket exists and the credentials reach it: one
// HEAD request, which S3 bills as a read.
func (s *Store) Ping(ctx context.Context) error {
	ok, err := s.reads.BucketExists(ctx, s.bucket)
	switch {
	case err != nil:
		return unavailable(ctx, fmt.Errorf("s3: ping bucket %q: %w", s.bucket, err))
	case !ok:
		return fmt.Errorf("s3: ping: bucket %q does not exist", s.bucket)
	}
	return nil
}

// Put stores the object read from r at key, replacing any existing object,
// with the Content-Type of narrator.MediaContentType. Memory stays bounded:
// an object of up to 1 MiB goes in one PUT from a buffer, a larger one in a
// multipart upload of 8 MiB parts. It returns an EINVALID *narrator.Error for a bad key,
// r's error if r fails, and ctx's error if ctx ends while r is being read;
// in all three cases nothing is stored.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) (err error) {
	defer wrap(ctx, &err, "s3: put %q", key)
	name, err := s.objectName(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r = ctxio.Reader(ctx, r)
	opts := minio.PutObjectOptions{ContentType: narrator.MediaContentType(key), PartSize: partSize}

	head := make([]byte, singlePutSize)
	n, err := io.ReadFull(r, head)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return s.putSmall(ctx, name, head[:n], opts)
	case err != nil:
		return fmt.Errorf("read: %w", err)
	}
	// Larger than one PUT: a multipart upload of unknown size, which the
	// SDK completes only once r is drained and aborts on any error.
	_, err = s.client.PutObject(ctx, s.bucket, name, io.MultiReader(bytes.NewReader(head), r), -1, opts)
	return err
}

// putAttempts bounds how often putSmall sends its PUT. versitygw's posix
// backend (v1.8.0, the test server) creates an object's parent directories
// without retrying when a concurrent delete prunes them as it goes, and then
// refuses the PUT with ExistingObjectIsDirectory. The request is safe to
// repeat; a real conflict fails every attempt. Only the single PUT is
// repeated: a multipart upload cannot be replayed from a stream.
const putAttempts = 3

// putSmall stores data at the object name in one PUT.
func (s *Store) putSmall(ctx context.Context, name string, data []byte, opts minio.PutObjectOptions) error {
	for attempt := 1; ; attempt++ {
		_, err := s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(data), int64(len(data)), opts)
		if err == nil || attempt == putAttempts || minio.ToErrorResponse(err).Code != "ExistingObjectIsDirectory" {
			return err
		}
	}
}

// Open returns the object at key for reading, with its size and modification
// time. Reading and seeking fetch the object lazily, a range at a time, and
// fail if the object is replaced meanwhile. The caller must close the
// reader. It returns an error matching narrator.ErrBlobNotFound if no object
// exists at key, and an EINVALID *narrator.Error for a bad key.
func (s *Store) Open(ctx context.Context, key string) (_ io.ReadSeekCloser, _ narrator.BlobInfo, err error) {
	defer wrap(ctx, &err, "s3: open %q", key)
	name, err := s.objectName(key)
	if err != nil {
		return nil, narrator.BlobInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, narrator.BlobInfo{}, err
	}
	obj, err := s.reads.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, narrator.BlobInfo{}, err
	}
	// Stat sends a HEAD request; the first Read then GETs from the current
	// offset, only if the object still has the ETag seen here.
	info, err := obj.Stat()
	if err != nil {
		obj.Close()
		if isNotFound(err) {
			return nil, narrator.BlobInfo{}, narrator.ErrBlobNotFound
		}
		return nil, narrator.BlobInfo{}, err
	}
	return obj, narrator.BlobInfo{Size: info.Size, ModTime: info.LastModified}, nil
}

// Delete removes the object at key. A missing object is not an error. It
// returns an EINVALID *narrator.Error for a bad key.
func (s *Store) Delete(ctx context.Context, key string) (err error) {
	defer wrap(ctx, &err, "s3: delete %q", key)
	name, err := s.objectName(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// S3 answers a delete of a missing object with success.
	return s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{})
}

// DeletePrefix removes every object whose key is prefix or starts with
// prefix + "/"; a trailing slash on prefix is ignored. Prefixes match whole
// segments: "ab" does not remove "abc/x". Nothing there is not an error. It
// returns an EINVALID *narrator.Error for an empty or bad prefix, so it can
// never remove the whole store.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) (err error) {
	defer wrap(ctx, &err, "s3: delete prefix %q", prefix)
	name, err := s.objectName(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The object named prefix, then everything listed under prefix/, are
	// removed in batches of up to 1,000 keys a request as the listing goes.
	var listErr error
	objects := func(yield func(minio.ObjectInfo) bool) {
		if !yield(minio.ObjectInfo{Key: name}) {
			return
		}
		for obj := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: name + "/", Recursive: true}) {
			if obj.Err != nil {
				listErr = fmt.Errorf("list: %w", obj.Err)
				return
			}
			if !yield(obj) {
				return
			}
		}
	}
	results, err := s.client.RemoveObjectsWithIter(ctx, s.bucket, objects, minio.RemoveObjectsOptions{})
	if err != nil {
		return err
	}
	var errs []error
	for res := range results {
		if res.Err != nil {
			errs = append(errs, fmt.Errorf("remove %q: %w", res.ObjectName, res.Err))
		}
	}
	return errors.Join(append(errs, listErr)...)
}

// Folders returns the names of the store's top-level folders, the first
// segments of keys that have more than one, in no particular order. S3
// lists them a thousand to a request.
func (s *Store) Folders(ctx context.Context) (_ []string, err error) {
	defer wrap(ctx, &err, "s3: list folders")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []string
	for obj := range s.reads.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		// Without Recursive, a folder comes as its common prefix.
		name, ok := strings.CutSuffix(strings.TrimPrefix(obj.Key, s.prefix), "/")
		if ok && narrator.ValidateBlobKey(name) == nil && !strings.Contains(name, "/") {
			out = append(out, name)
		}
	}
	return out, nil
}

// List returns every object whose key starts with prefix + "/" (a
// trailing slash on prefix is ignored), with its info, in no particular
// order; nothing there is an empty list, not an error. It returns an
// EINVALID *narrator.Error for an empty or bad prefix.
func (s *Store) List(ctx context.Context, prefix string) (_ []narrator.BlobObject, err error) {
	defer wrap(ctx, &err, "s3: list %q", prefix)
	name, err := s.objectName(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []narrator.BlobObject
	for obj := range s.reads.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: name + "/", Recursive: true}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		out = append(out, narrator.BlobObject{Key: strings.TrimPrefix(obj.Key, s.prefix),
			BlobInfo: narrator.BlobInfo{Size: obj.Size, ModTime: obj.LastModified}})
	}
	return out, nil
}

// isNotFound reports whether err is S3's answer for a missing object.
func isNotFound(err error) bool {
	return minio.ToErrorResponse(err).Code == minio.NoSuchKey
}

// wrap prefixes a non-nil *err with a formatted context, keeping the chain
// for errors.Is and errors.As, and passes it through unavailable.
func wrap(ctx context.Context, err *error, format string, args ...any) {
	if *err != nil {
		*err = unavailable(ctx, fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *err))
	}
}

// readRetries bounds the SDK's tries of an Open or a Ping that fails for
// the network or a 5xx answer (its default is 10, with up to some 8 s of
// back-off between them), and readDialTimeout each try's connection (30 s
// by default): while the server cannot be reached, a request for media
// then fails within seconds, with a 503, instead of hanging. Writes keep
// the SDK's defaults: a part of a multipart upload from a stream cannot be
// sent again once its upload is given up.
const (
	readRetries     = 3
	readDialTimeout = 3 * time.Second
)

// unavailable returns err marked narrator.EUNAVAILABLE when it says that
// the S3 server cannot be reached or cannot serve just now, after the
// SDK's retries: the server answered 500, 502, 503 or 504 (InternalError,
// SlowDown, ServiceUnavailable); or a connection could not be made, or
// broke, or timed out (a *net.OpError, a timeout, an answer cut short). A
// name that does not resolve, a certificate refused and any other error
// say the configuration is wrong, not that the server is away: they are
// returned as they are, as are an error with a code (a bad key), the
// caller's cancellation and the caller's own deadline.
func unavailable(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || narrator.ErrorCode(err) != narrator.EINTERNAL {
		return err
	}
	var (
		resp    minio.ErrorResponse
		certErr *tls.CertificateVerificationError
		dnsErr  *net.DNSError
		opErr   *net.OpError
		netErr  net.Error
		urlErr  *url.Error
	)
	switch {
	case errors.As(err, &resp):
		switch resp.StatusCode {
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return narrator.Unavailable(err)
		}
	case errors.As(err, &certErr), errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		// The configuration is wrong, not the server away.
	case errors.As(err, &opErr), errors.As(err, &netErr) && netErr.Timeout(),
		errors.As(err, &urlErr) && (errors.Is(urlErr, io.EOF) || errors.Is(urlErr, io.ErrUnexpectedEOF)):
		return narrator.Unavailable(err)
	}
	return err
}
