package narrator

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Account owns projects, API keys and dashboard users.
type Account struct {
	ID        int64
	Name      string
	CreatedAt time.Time
}

// Validate reports whether the account can be stored.
func (a *Account) Validate() error {
	if strings.TrimSpace(a.Name) == "" {
		return Errorf(EINVALID, "name is required")
	}
	if len(a.Name) > 200 {
		return Errorf(EINVALID, "name must be at most 200 characters")
	}
	if err := checkText("name", a.Name); err != nil {
		return err
	}
	return nil
}

// APIKey is one of an account's API keys. The secret itself is never stored:
// only its SHA-256 hash and a short prefix that lets people tell keys apart.
type APIKey struct {
	ID        int64
	AccountID int64
	Prefix    string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// APIKeyPrefixLen is how many characters of a key, after its "nk_" marker,
// are kept in clear so that people can tell their keys apart.
const APIKeyPrefixLen = 8

// NewAPIKey returns a fresh random API key, its display prefix and the hash
// under which it is stored.
func NewAPIKey() (secret, prefix string, hash []byte, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", nil, fmt.Errorf("read random key: %w", err)
	}
	secret = "nk_" + hex.EncodeToString(b[:])
	return secret, secret[:3+APIKeyPrefixLen], HashAPIKey(secret), nil
}

// HashAPIKey returns the stored form of an API key: its SHA-256 hash. Keys
// are 256 random bits, so a fast hash is enough to make a leaked database
// useless for calling the API.
func HashAPIKey(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
