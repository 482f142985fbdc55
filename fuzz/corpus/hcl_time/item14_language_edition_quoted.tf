terraform {
  language = "TF2021"
}
