package store_test

import (
	"testing"

	"github.com/armadra/ama-rpc/store"
)

func TestCustomData(t *testing.T) {
	type note struct {
		UserEntryID string `json:"userEntryId"`
	}
	e := store.CustomEntry("ama.note", note{"u1"})
	got, err := store.CustomData[note](e)
	if err != nil || got.UserEntryID != "u1" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := store.CustomData[int](e); err == nil {
		t.Fatal("data of the wrong shape decoded")
	}
}
