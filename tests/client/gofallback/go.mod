module flakery.dev/client-fallback-test

go 1.19

require flakery.dev/go v0.0.0

replace flakery.dev/go => ../../../go
