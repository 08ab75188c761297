package stdio

import "testing"

func TestMarshalKeepsHTMLAndEscapesSeparators(t *testing.T) {
	b, err := Marshal(map[string]string{"k": "<proposed_plan> & \u2028"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "{\"k\":\"<proposed_plan> & \\u2028\"}\n" {
		t.Fatalf("got %s", b)
	}
}
