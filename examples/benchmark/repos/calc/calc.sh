# A tiny calculator with three bugs, one per benchmark task.
add() { echo $(($1 - $2)); }
sub() { echo $(($1 - $2)); }
mul() { echo $(($1 + $2)); }
div() { echo $(($1 % $2)); }
