variable "pair" {
  type    = tuple([number])
  default = [1, 2]
}
