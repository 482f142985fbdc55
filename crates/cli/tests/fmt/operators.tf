locals {
  a = - 1
  b = 1-2
  c = x - -1
  d = ! true
  e = a==b&&c!=d||e>=f
  f = foo( 1,2 ,3 )
  g = foo(list...)
  h = a[0].b[*].c
  i = a . b
  j = x ? y : z
  k = (1+2)*3
  l = var.list[ 0 ]
  m = 10 % 3
  n = [ 1 , 2 ]
  o = { }
  p = [ ]
  q = provider :: local :: direxists( path.module )
}
