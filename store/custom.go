package store

// CustomData decodes the data member of a custom entry (CustomEntry) into
// a T: the one decoder for extension state, instead of an anonymous
// wrapper struct at every reader. The caller has checked the entry's type
// and customType.
func CustomData[T any](e *Entry) (T, error) {
	var aux struct {
		Data T `json:"data"`
	}
	err := e.Decode(&aux)
	return aux.Data, err
}
