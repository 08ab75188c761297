package rpc_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/rpc"
)

func ask(b *rpc.Broker, ctx context.Context, id string) chan events.Approval {
	out := make(chan events.Approval, 1)
	go func() { out <- b.Ask(ctx, &events.PermissionRequest{RequestID: id}) }()
	return out
}

func TestBrokerWithoutClientDenies(t *testing.T) {
	b := rpc.NewBroker()
	if d := <-ask(b, context.Background(), "r1"); d != "deny" {
		t.Fatalf("got %s", d)
	}
}

func TestBrokerAnswerAndOrder(t *testing.T) {
	b := rpc.NewBroker()
	b.SetAttended(true)
	waiting := make(chan string, 1)
	rpc.SetOnPending(b, func(id string) { waiting <- id })
	res := ask(b, context.Background(), "r1")
	<-waiting
	var order []string
	b.Respond("r1", "allow_session", func(ok bool) {
		if !ok {
			t.Error("pending request not accepted")
		}
		order = append(order, "response")
	})
	if d := <-res; d != "allow_session" {
		t.Fatalf("got %s", d)
	}
	if len(order) != 1 {
		t.Fatalf("callback order %v", order)
	}
	// A second answer for the same id is not accepted (first resolver wins).
	b.Respond("r1", "deny", func(ok bool) {
		if ok {
			t.Error("second answer accepted")
		}
	})
}

func TestBrokerEarlyAnswerIsUsed(t *testing.T) {
	b := rpc.NewBroker()
	b.SetAttended(true)
	b.Respond("future", "allow", func(ok bool) {
		if ok {
			t.Fatal("nothing was pending")
		}
	})
	if d := <-ask(b, context.Background(), "future"); d != "allow" {
		t.Fatalf("got %s", d)
	}
}

func TestBrokerWithdrawAndTimeout(t *testing.T) {
	b := rpc.NewBroker()
	b.SetAttended(true)
	ctx, cancel := context.WithCancel(context.Background())
	res := ask(b, ctx, "r1")
	cancel()
	if d := <-res; d != "deny" {
		t.Fatalf("cancelled ask: %s", d)
	}
	b.Respond("gone", "allow", func(bool) {})
	b.SetAttended(false) // forgets early answers
	b.SetAttended(true)
	waiting := make(chan string, 1)
	rpc.SetOnPending(b, func(id string) { waiting <- id })
	res = ask(b, context.Background(), "gone")
	<-waiting
	b.SetAttended(false)
	if d := <-res; d != "deny" {
		t.Fatalf("withdrawn ask: %s", d)
	}
}

// An early answer survives the bound when its id was answered and used
// before: a used answer no longer counts towards the bound.
func TestBrokerEarlyAnswerBoundCountsLiveAnswers(t *testing.T) {
	b := rpc.NewBroker()
	b.SetAttended(true)
	b.Respond("a", "allow", func(bool) {})
	if d := <-ask(b, context.Background(), "a"); d != "allow" {
		t.Fatalf("first ask: %s", d)
	}
	b.Respond("a", "allow_session", func(bool) {})
	for i := 0; i < rpc.MaxEarlyAnswers-1; i++ {
		b.Respond(fmt.Sprintf("x%d", i), "deny", func(bool) {})
	}
	ctx, cancel := context.WithCancel(context.Background())
	rpc.SetOnPending(b, func(string) { cancel() }) // evicted: the ask would wait
	if d := <-ask(b, ctx, "a"); d != "allow_session" {
		t.Fatalf("kept answer lost: %s", d)
	}
	cancel()
}

// An answer to a request whose permission_request went out while an
// earlier ask still waits (asks are serial) is accepted, listed as pending
// before it, and kept for its ask; a second answer does not replace it;
// an answer to a request never announced is not accepted.
func TestBrokerAnnouncedBeforeAsk(t *testing.T) {
	b := rpc.NewBroker()
	b.SetAttended(true)
	b.Expect("r2")
	if got := b.Pending(); len(got) != 1 || got[0] != "r2" {
		t.Fatalf("pending %v, want [r2]", got)
	}
	var accepted []bool
	b.Respond("r2", "allow", func(ok bool) { accepted = append(accepted, ok) })
	b.Respond("r2", "deny", func(ok bool) { accepted = append(accepted, ok) })
	b.Respond("never", "allow", func(ok bool) { accepted = append(accepted, ok) })
	if fmt.Sprint(accepted) != "[true false false]" {
		t.Fatalf("accepted %v, want [true false false]", accepted)
	}
	if got := b.Pending(); len(got) != 0 {
		t.Fatalf("pending %v after the answer", got)
	}
	if d := <-ask(b, context.Background(), "r2"); d != "allow" {
		t.Fatalf("the ask got %s, want the first answer (allow)", d)
	}
}

// A request resolved without the broker (a host adapter answered it) is
// no longer listed as pending once its permission_resolved went out.
func TestBrokerSettledElsewhere(t *testing.T) {
	b := rpc.NewBroker()
	b.SetAttended(true)
	b.Expect("r1")
	b.Settled("r1")
	if got := b.Pending(); len(got) != 0 {
		t.Fatalf("pending %v after it was resolved elsewhere", got)
	}
	var accepted []bool
	b.Respond("r1", "allow", func(ok bool) { accepted = append(accepted, ok) })
	if fmt.Sprint(accepted) != "[false]" {
		t.Fatalf("an answer after the resolution was accepted: %v", accepted)
	}
}
