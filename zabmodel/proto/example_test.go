package proto_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Example follows a create through the wire, as the package documentation
// sketches it.
func Example() {
	// Client: encode the request.
	var e proto.Encoder
	h := proto.RequestHeader{Xid: 5, Type: proto.OpCreate}
	req := proto.CreateRequest{Path: "/lock/seq-", Data: []byte("x"),
		ACL: proto.OpenACLUnsafe, Flags: proto.EphemeralSequential}
	h.Encode(&e)
	req.Encode(&e)
	msg := bytes.Clone(e.Bytes())

	// Server: decode and check it.
	gotHeader, body, err := proto.DecodeRequest(msg)
	if err != nil {
		panic(err)
	}
	create := body.(*proto.CreateRequest)
	mode, err := proto.CreateModeFromFlag(int32(create.Flags))
	fmt.Println(proto.DescribeRequest(gotHeader, body), mode.IsSequential(), err)
	fmt.Println(proto.ValidateSequentialPath(create.Path))

	// Client: decode a failed reply and check its code.
	reply := proto.Marshal(&proto.ReplyHeader{Xid: 5, Zxid: 0x100000003, Err: proto.NodeExists})
	rh, _, err := proto.DecodeReply(proto.OpCreate, reply)
	if err != nil {
		panic(err)
	}
	fmt.Println(proto.DescribeReply(rh, nil), errors.Is(rh.Err.Err(), proto.NodeExists))
	// Output:
	// request xid=5 create /lock/seq- data=1B mode=EPHEMERAL_SEQUENTIAL acl=[world:anyone:cdrwa] true <nil>
	// <nil>
	// reply xid=5 zxid=0x100000003 err=NODEEXISTS true
}
