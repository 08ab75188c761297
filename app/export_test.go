package app

// Han reports whether s holds a CJK ideograph (the external tests'
// "is this Chinese" check; han in cli_lang_test.go).
var Han = han
