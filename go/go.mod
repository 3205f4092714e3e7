module flakery.dev/go

go 1.19
