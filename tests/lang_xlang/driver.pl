# Perl driver of the cross-language tests: writes test vectors with a module that
# `vigil gen --lang perl` generated, and reads such files back in canonical form
# (tests/lang_xlang/xlang_common.py).
#
#   perl driver.pl write DIR MODULE VECTORS OUT.bin
#   perl driver.pl read DIR MODULE VECTORS IN.bin OUT.json
#   perl driver.pl range DIR MODULE RECORD   every integer field refuses its limits +- 1
use strict;
use warnings;
use JSON::PP ();

my ($cmd, $dir, $module, $vectors, @rest) = @ARGV;
die "usage: driver.pl write|read|range DIR MODULE VECTORS|RECORD FILE...\n"
    unless defined $vectors;
unshift @INC, $dir;
require "$module.pm";

sub slurp {
    my ($path) = @_;
    open(my $f, '<:raw', $path) or die "$path: $!\n";
    local $/;
    my $s = <$f>;
    close $f;
    return $s;
}

my $json = JSON::PP->new->utf8->canonical;
my %INT = map { $_ => 1 } qw(int8 int16 int32 int64 uint8 uint16 uint32 uint64);
if ($cmd eq 'range') {
    check_range($vectors);
    exit 0;
}
my $vecs = $json->decode(slurp($vectors))->{records};
no strict 'refs';
my %records = %{"${module}::RECORDS"};
use strict 'refs';

sub value {
    my ($t, $v) = @_;
    return "$v" if $INT{$t};    # the module range-checks decimal text exactly
    if ($t eq 'float64') {
        return unpack('d<', pack('H*', '0000000000000080')) if "$v" eq '-0.0';
        # Perl's "nan" + 0 has its sign bit set; Python's float("nan") has not.
        return unpack('d<', pack('H*', '000000000000f87f')) if "$v" eq 'nan';
        return $v + 0;          # numbers, "inf", "-inf"
    }
    return pack('H*', $v) if $t eq 'bytes';
    return "${module}::EntityRef"->new("$v->[0]", "$v->[1]") if $t eq 'entity';
    return $v ? 1 : 0 if $t eq 'bool';
    return $v;                  # string: characters
}

sub canon {
    my ($t, $v) = @_;
    return 0 + $v if $INT{$t};
    return sprintf('%016x', unpack('Q<', pack('d<', $v))) if $t eq 'float64';
    return $v ? JSON::PP::true : JSON::PP::false if $t eq 'bool';
    return unpack('H*', $v) if $t eq 'bytes';
    return [0 + $v->{id}, 0 + $v->{gen}] if $t eq 'entity';
    return $v;
}

if ($cmd eq 'write') {
    my @recs;
    for my $vec (@$vecs) {
        my $cls = $records{$vec->{type}} or die "no record $vec->{type}\n";
        my %types = map { $_->[0] => $_->[1] } $cls->fields;
        my %v;
        for my $k (keys %{$vec->{values} || {}}) {
            die "$vec->{type} has no field $k\n" unless exists $types{$k};
            $v{$k} = value($types{$k}, $vec->{values}{$k});
        }
        push @recs, $cls->new(%v);
    }
    open(my $out, '>:raw', $rest[0]) or die "$rest[0]: $!\n";
    my ($pkg) = $module;
    no strict 'refs';
    &{"${module}::write_records"}($out, @recs);
    close $out or die "$rest[0]: $!\n";
} elsif ($cmd eq 'read') {
    my ($in, $outpath) = @rest;
    open(my $f, '<:raw', $in) or die "$in: $!\n";
    my @result;
    no strict 'refs';
    for my $vec (@$vecs) {
        my $cls = $records{$vec->{type}};
        my $rec = &{"${module}::read_record"}($f, $cls);
        die "$in: ends before a $vec->{type}\n" unless defined $rec;
        my %vals = map { $_->[0] => canon($_->[1], $rec->{$_->[0]}) } $cls->fields;
        push @result, {type => $vec->{type}, values => \%vals};
    }
    die "$in: bytes after the last record\n" if read($f, my $more, 1);
    open(my $out, '>:raw', $outpath) or die "$outpath: $!\n";
    print {$out} $json->encode(\@result);
    close $out or die "$outpath: $!\n";
} else {
    die "unknown command $cmd\n";
}

# Each integer field takes its limits and refuses them +- 1 (decimal text, exact at 64
# bits, from Math::BigInt), and a float that only looks whole (2**64) is refused too.
sub check_range {
    my ($record) = @_;
    require Math::BigInt;
    no strict 'refs';
    my $cls = ${"${module}::RECORDS"}{$record} or die "no record $record\n";
    use strict 'refs';
    my $checked = 0;
    for my $f ($cls->fields) {
        my ($name, $t) = @$f;
        next unless $INT{$t};
        my ($bits) = $t =~ /([0-9]+)/;
        my ($lo, $hi) = $t =~ /^u/
            ? (Math::BigInt->new(0), Math::BigInt->new(2)->bpow($bits)->bsub(1))
            : (Math::BigInt->new(2)->bpow($bits - 1)->bneg,
               Math::BigInt->new(2)->bpow($bits - 1)->bsub(1));
        for my $case ([$lo, 1], [$hi, 1], [$lo->copy->bsub(1), 0], [$hi->copy->badd(1), 0],
                      [2**64, 0], [0.5, 0]) {
            my ($v, $ok) = @$case;
            my $rec = $cls->new($name => ref $v ? $v->bstr : $v);
            my $refused = eval { $rec->encode; 1 } ? 0 : 1;
            die "$record.$name ($t) = $v: " . ($refused ? "refused: $@" : 'accepted') . "\n"
                if $refused == $ok;
            $checked++;
        }
    }
    die "$record: no integer field to check\n" unless $checked;
    print "perl: $checked range checks\n";
}
