variable "x" {
	type = string
	  default = "a"
}

resource "a" "b" {
        nested {
   deeper {
 v = 1
        }
    }
}
