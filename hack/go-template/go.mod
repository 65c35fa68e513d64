module metal-l2/go-template

go 1.22
