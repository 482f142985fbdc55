terraform {
  experiments = []
}
