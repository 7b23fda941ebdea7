package s3

import (
	"context"

	"github.com/minio/minio-go/v7"
)

// StoredContentType returns the Content-Type the server holds for key.
func StoredContentType(ctx context.Context, s *Store, key string) (string, error) {
	info, err := s.client.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	return info.ContentType, err
}
