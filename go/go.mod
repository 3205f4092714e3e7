module flakery

go 1.19
