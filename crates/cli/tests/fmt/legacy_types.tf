variable "a" {
  type = list
}
variable "b" {
  type = "string"
}
variable "c" {
  type = "map"
}
variable "d" {
  type = set
}
variable "e" {
  type = map(string)
}
