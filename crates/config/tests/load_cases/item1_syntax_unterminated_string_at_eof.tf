locals {
  a = "abc