package httpapi

import (
	"sync"

	"github.com/narrator/narrator"
)

// maxKnownKeys caps the pairs of a key and a project that knownKeys holds.
const maxKnownKeys = 10_000

// knownKeys remembers which API keys have authorized which projects on
// this node, so that a create made with one need not read its key before
// its audio: the store reads the key as it creates the audio
// (Store.CreateAudioWithKey), in the same round trip as the rest of the
// create. It holds no decision: a key revoked since it was remembered
// fails the create, which then forgets it. It holds at most maxKnownKeys
// pairs, and forgets one at random to make room.
type knownKeys struct {
	mu    sync.Mutex
	pairs map[knownKey]int64 // the project's account
}

// knownKey is a key's hash and a project it authorized.
type knownKey struct {
	hash      string
	projectID int64
}

// account returns the account of projectID if the key with this hash has
// authorized it before.
func (k *knownKeys) account(hash []byte, projectID int64) (int64, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	id, ok := k.pairs[knownKey{string(hash), projectID}]
	return id, ok
}

// remember notes that the key with this hash authorized p.
func (k *knownKeys) remember(hash []byte, p *narrator.Project) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pairs == nil {
		k.pairs = map[knownKey]int64{}
	}
	pair := knownKey{string(hash), p.ID}
	if _, held := k.pairs[pair]; !held && len(k.pairs) >= maxKnownKeys {
		for old := range k.pairs {
			delete(k.pairs, old)
			break
		}
	}
	k.pairs[pair] = p.AccountID
}

// forget drops the pair of the key with this hash and projectID.
func (k *knownKeys) forget(hash []byte, projectID int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.pairs, knownKey{string(hash), projectID})
}
