locals {
  a = "abc
  def"
  b = 1
}
