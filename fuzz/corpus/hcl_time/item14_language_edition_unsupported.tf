terraform {
  language = TF2038
}
