package httpapi

import (
	"fmt"
	"testing"

	"github.com/narrator/narrator"
)

func TestKnownKeysAreBounded(t *testing.T) {
	var k knownKeys
	for i := range maxKnownKeys + 100 {
		k.remember([]byte(fmt.Sprint("key", i)), &narrator.Project{ID: 7, AccountID: 3})
	}
	if n := len(k.pairs); n != maxKnownKeys {
		t.Fatalf("%d pairs held, want %d", n, maxKnownKeys)
	}
	last := []byte(fmt.Sprint("key", maxKnownKeys+99))
	if id, ok := k.account(last, 7); !ok || id != 3 {
		t.Fatalf("the last pair remembered: %d, %v", id, ok)
	}
	if _, ok := k.account(last, 8); ok {
		t.Fatal("a key is known for a project it did not authorize")
	}
	k.forget(last, 7)
	if _, ok := k.account(last, 7); ok {
		t.Fatal("a forgotten pair is still known")
	}
}
